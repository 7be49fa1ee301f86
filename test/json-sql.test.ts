/**
 * The JSON text PostgreSQL writes for REST answers (src/db/json-sql.ts) is the JSON that
 * JSON.stringify writes for the same values: the same escapes, key order, no spaces, null as
 * null, timestamps as Date#toJSON writes them. Every REST answer of a post, comment, user and
 * tenant post is built this way (reads and writes alike: a write reads its row back through
 * the read's builder), so this is what makes those answers standard, byte-stable JSON.
 */
import { startTestApp, type TestApp } from './support/harness';
import { sql } from './support/blog';
import { jsonObjectSql, type JsonKey } from '../src/db/json-sql';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe('the generator (src/db/json-sql.ts) against JSON.stringify, value by value', () => {
  const KEYS: JsonKey[] = [['n', 'int'], ['s', 'string'], ['b', 'bool'], ['t', 'timestamp?'], ['z', 'string?'], ['j', 'json?']];

  it('every code point of the BMP except surrogates and U+0000, and a spread of the others', async () => {
    const rows = await sql<{ n: number; s: string; json: string }>(
      app,
      `select x.n, x.s, ${jsonObjectSql('x', KEYS)} as json from (
         select n, chr(n) || 'x' || chr(n) as s, n % 2 = 0 as b, null::timestamptz as t, null::text as z, null::text as j
         from generate_series(1, 1114111) n where (n < 55296 or n > 57343) and (n <= 65535 or n % 997 = 0 or n in (65536, 128512, 1114111))
       ) x order by x.n`,
    );
    expect(rows.length).toBeGreaterThan(63_000);
    const wrong: string[] = [];
    for (const r of rows) {
      const expected = JSON.stringify({ n: r.n, s: String.fromCodePoint(r.n) + 'x' + String.fromCodePoint(r.n), b: r.n % 2 === 0, t: null, z: null, j: null });
      if (r.json !== expected && wrong.length < 10) wrong.push(`U+${r.n.toString(16)}: ${JSON.stringify(r.json)} vs ${JSON.stringify(expected)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('timestamps from year 1 to 9999 to the millisecond (microseconds cut, as the ORM reads them), and nested JSON', async () => {
    const stamps = ['0001-01-01T00:00:00.000Z', '0999-12-31T23:59:59.999Z', '1969-12-31T23:59:59.999Z', '1970-01-01T00:00:00.000Z', '2000-02-29T12:00:00.010Z', '2038-01-19T03:14:08.100Z', '9999-12-31T23:59:59.999Z'];
    const rows = await sql<{ json: string }>(
      app,
      `select ${jsonObjectSql('x', KEYS)} as json from (
         select u.n::int as n, '' as s, true as b, u.t::timestamptz as t, 'z' as z, '{"a":[1,null]}' as j from unnest(string_to_array(?, ',')) with ordinality as u(t, n)
       ) x order by x.n`,
      [stamps.join(',')],
    );
    expect(rows.map((r) => r.json)).toEqual(stamps.map((t, i) => JSON.stringify({ n: i + 1, s: '', b: true, t: new Date(t), z: 'z', j: { a: [1, null] } })));
  });

  it('a required timestamp and a key with quotes in its name; SQL null in a value declared without ? makes the whole object null', async () => {
    const keys: JsonKey[] = [['say "hi"', 'int', 'x.n'], ['at', 'timestamp', 'x.t'], ['s', 'string', 'x.s']];
    const rows = await sql<{ json: string | null }>(
      app,
      `select ${jsonObjectSql('x', keys)} as json from (values
         (1, '2026-11-27T07:00:00.123Z'::timestamptz, 'a'), (null, '2026-11-27T07:00:00Z'::timestamptz, 'a'),
         (3, null, 'a'), (4, '2026-11-27T07:00:00Z'::timestamptz, null)
       ) x(n, t, s) order by x.n nulls first`,
    );
    expect(rows.map((r) => r.json)).toEqual([null, JSON.stringify({ 'say "hi"': 1, at: new Date('2026-11-27T07:00:00.123Z'), s: 'a' }), null, null]);
  });

  it('an object with no keys is {}', async () => {
    const [{ json }] = await sql<{ json: string }>(app, `select ${jsonObjectSql('x', [])} as json from (select 1) x`);
    expect(json).toBe('{}');
  });
});
