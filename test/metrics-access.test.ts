import { startTestApp, createTestDatabase, type TestApp } from './support/harness';
import { loadConfig } from '../src/config/config';

/**
 * /metrics is for the scraper only (CONTRACT 18): with METRICS_TOKEN it answers only
 * `Authorization: Bearer <token>`; in production without a token it is not served at all; in
 * development without one it stays open. (The cluster's summing behind the token: test/quiet-primary.test.ts.)
 */
const TOKEN = 'scrape-me-0123456789abcdef';
const PRODUCTION = { NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:1', APP_URL: 'http://app.test' };

let guarded: TestApp;
let hidden: TestApp;
let open: TestApp;

beforeAll(async () => {
  // One database for the three apps: each is only asked for /metrics.
  const DATABASE_URL = await createTestDatabase();
  guarded = await startTestApp({ ...PRODUCTION, DATABASE_URL, METRICS_TOKEN: TOKEN });
  hidden = await startTestApp({ ...PRODUCTION, DATABASE_URL });
  open = await startTestApp({ NODE_ENV: 'development', DATABASE_URL });
});
afterAll(async () => {
  await guarded?.close();
  await hidden?.close();
  await open?.close();
});

const get = (app: TestApp, headers: Record<string, string> = {}, method = 'GET') => fetch(`${app.url}/metrics`, { method, headers });

describe('with METRICS_TOKEN', () => {
  it('answers the bearer token with the exposition', async () => {
    const res = await get(guarded, { authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toMatch(/^# HELP http_requests_total /m);
    // The scheme is case-insensitive (RFC 9110); HEAD answers as GET.
    expect((await get(guarded, { authorization: `bearer ${TOKEN}` })).status).toBe(200);
    expect((await get(guarded, { authorization: `Bearer ${TOKEN}` }, 'HEAD')).status).toBe(200);
  });

  it('answers anything else 401 {message} with a Bearer challenge', async () => {
    const wrong: Record<string, string>[] = [
      {},
      { authorization: 'Bearer' },
      { authorization: 'Bearer ' },
      { authorization: 'Bearer wrong' },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
      { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` },
      { authorization: TOKEN },
    ];
    for (const headers of wrong) {
      const res = await get(guarded, headers);
      expect([res.status, await res.json()]).toEqual([401, { message: 'Unauthenticated' }]);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    }
  });

  it('other methods are 405 as on any known path', async () => {
    expect((await get(guarded, { authorization: `Bearer ${TOKEN}` }, 'POST')).status).toBe(405);
  });
});

describe('production without METRICS_TOKEN', () => {
  it('does not serve /metrics: 404 Not found, as an unknown path, whatever the method or header', async () => {
    for (const [method, headers] of [['GET', {}], ['GET', { authorization: `Bearer ${TOKEN}` }], ['POST', {}]] as const) {
      const res = await get(hidden, headers, method);
      expect([res.status, await res.json()]).toEqual([404, { message: 'Not found' }]);
    }
    const unknown = await fetch(`${hidden.url}/nowhere`);
    expect(unknown.status).toBe(404);
  });
});

describe('development without METRICS_TOKEN', () => {
  it('stays open', async () => {
    const res = await get(open);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^# HELP http_requests_total /m);
  });
});

it('METRICS_TOKEN is read from the environment (empty means unset)', () => {
  expect(loadConfig({ METRICS_TOKEN: 'abc' }).metricsToken).toBe('abc');
  expect(loadConfig({ METRICS_TOKEN: '' }).metricsToken).toBeUndefined();
  expect(loadConfig({}).metricsToken).toBeUndefined();
});
