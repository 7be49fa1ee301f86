import type { RequestContext } from '../../core/context';
import { replyJson, replyTagged, type Reply, type RestRequest } from '../../http/routes';
import type { IdempotencyService } from './idempotency.service';

const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const REPLAYED = { 'Idempotent-Replayed': 'true' };

/** What a REST create answers: its JSON text (the read builder's) and the new row's id. */
export interface CreatedJson {
  json: string;
  id: number;
}

/**
 * A REST create (201) honouring the request's Idempotency-Key: the route passes its service call,
 * run on the context it is given; a replay answers the stored status and JSON text as they were
 * sent, marked `Idempotent-Replayed: true`.
 */
export async function keyedCreate(
  idempotency: IdempotencyService,
  ctx: RequestContext,
  req: RestRequest,
  create: (ctx: RequestContext) => Promise<CreatedJson>,
  opts: { tenant?: boolean; tagged?: boolean } = {},
): Promise<Reply> {
  const request = await idempotency.prepare(ctx, { key: req.header(IDEMPOTENCY_HEADER), field: IDEMPOTENCY_HEADER, method: 'POST', path: req.path, body: req.body, tenant: opts.tenant });
  const out = await idempotency.run(ctx, request, async (c) => {
    const { json, id } = await create(c);
    return { status: 201, body: json, resourceId: id, value: json };
  });
  // `tagged`: the answer is one post or comment, so it carries its JSON's strong ETag, replayed or not.
  const answer = opts.tagged ? replyTagged : replyJson;
  return out.replayed ? answer(out.body!, out.status, REPLAYED) : answer(out.value, 201);
}
