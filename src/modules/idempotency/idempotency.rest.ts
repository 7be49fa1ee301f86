import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../../core/context';
import type { Statement } from '../../db/statements';
import { replyJson, replyTagged, type Reply, type RestRequest } from '../../http/routes';
import type { IdempotencyService, KeepAnswer } from './idempotency.service';

const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const REPLAYED = { 'Idempotent-Replayed': 'true' };

/** What a REST create answers: its JSON text (the read builder's) and the new row's id. */
export interface CreatedJson {
  json: string;
  id: number;
}

/**
 * How a REST create reads its new row's answer in its transaction: `statement` is the read
 * builder's statement of that row (its JSON text as `json`); under a key it also stores it.
 */
export type ReadCreated = (tx: EntityManager, statement: Statement, id: number) => Promise<CreatedJson>;

const readCreated = (keep: KeepAnswer): ReadCreated => async (tx, statement, id) => {
  const json = await keep(tx, statement, { status: 201, resourceId: id });
  // A write that cannot read its own row back is a bug (500).
  if (json === null) throw new Error(`row ${id} is not visible to its own write`);
  return { json, id };
};

/**
 * A REST create (201) honouring the request's Idempotency-Key: the route passes its service call,
 * run on the context it is given; a replay answers the stored status and JSON text as they were
 * sent, marked `Idempotent-Replayed: true`.
 */
export async function keyedCreate(
  idempotency: IdempotencyService,
  ctx: RequestContext,
  req: RestRequest,
  create: (ctx: RequestContext, read: ReadCreated) => Promise<CreatedJson>,
  opts: { tenant?: boolean; tagged?: boolean } = {},
): Promise<Reply> {
  const request = await idempotency.prepare(ctx, { key: req.header(IDEMPOTENCY_HEADER), field: IDEMPOTENCY_HEADER, method: 'POST', path: req.path, body: req.body, tenant: opts.tenant });
  const out = await idempotency.run(ctx, request, async (c, keep) => {
    const { json, id } = await create(c, readCreated(keep));
    return { status: 201, body: json, resourceId: id, value: json };
  });
  // `tagged`: the answer is one post or comment, so it carries its JSON's strong ETag, replayed or not.
  const answer = opts.tagged ? replyTagged : replyJson;
  return out.replayed ? answer(out.body!, out.status, REPLAYED) : answer(out.value, 201);
}
