import { request } from 'node:http';

export interface SimpleResponse {
  status: number;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * One request on a fresh connection (no keep-alive pool): the harness's own few requests must
 * never land on a socket the server is just closing, as pooled fetch() sockets sometimes do.
 */
export function call(base: string, method: string, path: string, opts: { headers?: Record<string, string>; body?: string } = {}): Promise<SimpleResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (k.toLowerCase() !== 'content-length') headers[k] = v;
    if (opts.body !== undefined) headers['content-length'] = Buffer.byteLength(opts.body);
    const req = request(base + path, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        let body: any = text;
        try {
          body = JSON.parse(text);
        } catch { /* not JSON */ }
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
      });
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}
