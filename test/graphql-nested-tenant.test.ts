import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { asTenant, freshTenant, seedTenantPosts } from './support/tenants';

/**
 * GraphQL runs sibling root fields of a query concurrently, each in its own resolver call: the
 * tenant must reach all of them, and lifting the filter in one (allTenantPosts) must not lift it
 * in a sibling (tenantPosts) sharing the request's EntityManager.
 */
let app: TestApp;
let api: ReturnType<typeof clients>;
let admin: string;
let A: number;
let B: number;
let idsA: number[];
let idsB: number[];

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
  admin = (await buildUser(app, { role: 'admin' })).token;
  A = freshTenant();
  B = freshTenant();
  idsA = (await seedTenantPosts(app, A, 3)).map((p) => p.id);
  idsB = (await seedTenantPosts(app, B, 2)).map((p) => p.id);
});
afterAll(() => app.close());

const ids = (rows: Array<{ id: number }>) => rows.map((r) => r.id);

describe('aliases and fragments over tenantPosts', () => {
  const QUERY = `
    query Many {
      first: tenantPosts { id tenantId }
      second: tenantPosts { ...Row }
      third: tenantPosts { __typename ... on TenantPost { id tenantId } }
      fourth: tenantPosts { tenantId id }
    }
    fragment Row on TenantPost { id tenantId }
  `;

  it('every alias answers the same rows of the same tenant', async () => {
    const res = await api.gql(QUERY, undefined, { headers: asTenant(A) });
    expect(res.errors).toBeUndefined();
    const expected = idsA.map((id) => ({ id, tenantId: A }));
    expect(res.data.first).toEqual(expected);
    expect(res.data.second).toEqual(expected);
    expect(res.data.third).toEqual(expected.map((r) => ({ __typename: 'TenantPost', ...r })));
    expect(res.data.fourth).toEqual(expected);
  });

  it('the same many-field query for several tenants at once: each gets only its own', async () => {
    const tenants = [A, B, freshTenant(), A, B];
    const answers = await Promise.all(tenants.map((t) => api.gql(QUERY, undefined, { headers: asTenant(t) })));
    answers.forEach((res, i) => {
      const t = tenants[i];
      const own = t === A ? idsA : t === B ? idsB : [];
      expect(res.errors).toBeUndefined();
      for (const alias of ['first', 'second', 'third', 'fourth']) {
        expect(ids(res.data[alias])).toEqual(own);
        expect(res.data[alias].every((r: { tenantId: number }) => r.tenantId === t)).toBe(true);
      }
    });
  });

  it('each alias reads with the tenant condition: one filtered statement per alias', async () => {
    app.sql.length = 0;
    const res = await api.gql(QUERY, undefined, { headers: asTenant(B) });
    expect(res.errors).toBeUndefined();
    const reads = app.sql.filter((s) => /from "tenant_posts"/.test(s));
    expect(reads).toHaveLength(4);
    for (const sql of reads) expect(sql).toMatch(/where "\w+"\."tenant_id" = \$1/);
  });
});

describe('tenantPosts and allTenantPosts side by side', () => {
  const BOTH = '{ mine: tenantPosts { id tenantId } everyone: allTenantPosts { id tenantId } me { role } }';

  it('as an admin with a tenant: the sibling keeps its filter while allTenantPosts lifts it', async () => {
    for (let i = 0; i < 5; i++) {
      const [forA, forB] = await Promise.all([
        api.gql(BOTH, undefined, { token: admin, headers: asTenant(A) }),
        api.gql(BOTH, undefined, { token: admin, headers: asTenant(B) }),
      ]);
      for (const [res, t, own] of [[forA, A, idsA], [forB, B, idsB]] as const) {
        expect(res.errors).toBeUndefined();
        expect(res.data.me).toEqual({ role: 'admin' });
        expect(res.data.mine).toEqual(own.map((id) => ({ id, tenantId: t })));
        const everyone = ids(res.data.everyone);
        for (const id of [...idsA, ...idsB]) expect(everyone).toContain(id);
        expect(everyone).toEqual([...everyone].sort((x, y) => x - y));
      }
    }
  });

  it('the same pair in the opposite order gives the same answers', async () => {
    const res = await api.gql('{ everyone: allTenantPosts { id } mine: tenantPosts { id tenantId } }', undefined, { token: admin, headers: asTenant(A) });
    expect(res.errors).toBeUndefined();
    expect(res.data.mine).toEqual(idsA.map((id) => ({ id, tenantId: A })));
    expect(ids(res.data.everyone)).toEqual(expect.arrayContaining([...idsA, ...idsB]));
  });

  it('as an admin without a tenant: tenantPosts fails with Unknown tenant and nulls the whole answer', async () => {
    const res = await api.gql(BOTH, undefined, { token: admin });
    expect(res.data).toBeNull();
    expect(res.errors).toHaveLength(1);
    expect(res.errors![0]).toMatchObject({ message: 'Unknown tenant', extensions: { code: 'UNAUTHENTICATED' }, path: ['mine'] });
  });

  it('as a tenant without admin: allTenantPosts is Forbidden; no tenant rows are returned', async () => {
    const { token } = await buildUser(app, { role: 'user' });
    const res = await api.gql(BOTH, undefined, { token, headers: asTenant(A) });
    expect(res.data).toBeNull();
    expect(res.errors).toHaveLength(1);
    expect(res.errors![0]).toMatchObject({ message: 'Forbidden', extensions: { code: 'FORBIDDEN' }, path: ['everyone'] });
  });
});

describe('several createTenantPost in one mutation', () => {
  it('run in order, each for the header tenant, and are visible to the next request', async () => {
    const t = freshTenant();
    const res = await api.gql(
      `mutation Three($p: String!) {
        one: createTenantPost(title: $p, body: "1") { id tenantId title }
        two: createTenantPost(title: $p, body: "2") { id tenantId title }
        three: createTenantPost(title: $p, body: "3") { id tenantId title }
      }`,
      { p: 'batch' },
      { headers: asTenant(t) },
    );
    expect(res.errors).toBeUndefined();
    const made = [res.data.one, res.data.two, res.data.three];
    expect(made.every((p) => p.tenantId === t && p.title === 'batch')).toBe(true);
    expect(made[0].id).toBeLessThan(made[1].id);
    expect(made[1].id).toBeLessThan(made[2].id);
    const list = await api.gql('{ tenantPosts { id body } }', undefined, { headers: asTenant(t) });
    expect(list.data.tenantPosts).toEqual(made.map((p, i) => ({ id: p.id, body: String(i + 1) })));
  });

  it('one invalid field fails alone; the valid ones are still written for the tenant (GraphQL semantics)', async () => {
    const t = freshTenant();
    const res = await api.gql(
      'mutation { ok: createTenantPost(title: "fine", body: "b") { id tenantId } bad: createTenantPost(title: "", body: "b") { id } }',
      undefined,
      { headers: asTenant(t) },
    );
    expect(res.data).toBeNull();
    expect(res.errors).toHaveLength(1);
    expect(res.errors![0]).toMatchObject({ message: 'Validation failed', path: ['bad'], extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'title', message: 'Title is required' }] } });
    const list = await api.gql('{ tenantPosts { title tenantId } }', undefined, { headers: asTenant(t) });
    expect(list.data.tenantPosts).toEqual([{ title: 'fine', tenantId: t }]);
  });
});

describe('one document, several operations', () => {
  const DOC = `
    query Mine { tenantPosts { id tenantId } }
    query Everyone { allTenantPosts { id } }
  `;

  it('operationName picks the operation; the tenant rules follow the one picked', async () => {
    const res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...asTenant(B) },
      body: JSON.stringify({ query: DOC, operationName: 'Mine' }),
    });
    const body = (await res.json()) as any;
    expect(body.errors).toBeUndefined();
    expect(body.data.tenantPosts).toEqual(idsB.map((id) => ({ id, tenantId: B })));

    const other = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...asTenant(B) },
      body: JSON.stringify({ query: DOC, operationName: 'Everyone' }),
    });
    const otherBody = (await other.json()) as any;
    expect(otherBody.data).toBeNull();
    expect(otherBody.errors[0]).toMatchObject({ message: 'Unauthenticated', extensions: { code: 'UNAUTHENTICATED' } });
  });
});
