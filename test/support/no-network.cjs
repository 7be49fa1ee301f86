// Preloaded (`node --require`) into a tool a test runs that must not reach the network (Redocly's
// CLI: telemetry, update checks). Any outgoing connection or DNS lookup is refused and reported on
// stderr with a NETWORK-ATTEMPT marker the test looks for. Local IPC sockets (a path) stay allowed;
// with NO_NETWORK_ALLOW=loopback, so do 127.0.0.1, ::1 and localhost (a proxy in front of a local
// service).
'use strict';
const net = require('node:net');
const dns = require('node:dns');

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const allowed = (host) => process.env.NO_NETWORK_ALLOW === 'loopback' && LOOPBACK.has(String(host ?? 'localhost'));

function refuse(what) {
  process.stderr.write(`NETWORK-ATTEMPT ${what}\n`);
  const err = new Error(`network access refused in this process: ${what}`);
  err.code = 'ENETUNREACH';
  return err;
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  // Node's own callers pass the normalized [options, callback] array.
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const opts = typeof first === 'object' && first !== null ? first : { port: first, host: args[1] };
  if (typeof opts.path === 'string' || allowed(opts.host)) return connect.apply(this, args);
  const err = refuse(`connect ${opts.host ?? 'localhost'}:${opts.port}`);
  process.nextTick(() => this.destroy(err));
  return this;
};
for (const name of ['lookup', 'resolve', 'resolve4', 'resolve6']) {
  const original = dns[name];
  dns[name] = function (host, ...rest) {
    if (allowed(host)) return original.call(this, host, ...rest);
    const cb = rest.find((a) => typeof a === 'function');
    const err = refuse(`dns ${name} ${host}`);
    if (cb) process.nextTick(() => cb(err));
  };
}
for (const name of ['lookup', 'resolve', 'resolve4', 'resolve6']) {
  const original = dns.promises[name];
  dns.promises[name] = async (host, ...rest) => {
    if (allowed(host)) return original.call(dns.promises, host, ...rest);
    throw refuse(`dns ${name} ${host}`);
  };
}
const fetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input?.url;
  let host;
  try { host = new URL(url).hostname.replace(/^\[|\]$/g, ''); } catch { /* not a URL */ }
  if (allowed(host)) return fetch(input, init);
  throw refuse(`fetch ${url}`);
};
