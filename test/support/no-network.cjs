// Preloaded (`node --require`) into a tool a test runs that must not reach the network (Redocly's
// CLI: telemetry, update checks). Any outgoing connection or DNS lookup is refused and reported on
// stderr with a NETWORK-ATTEMPT marker the test looks for. Local IPC sockets (a path) stay allowed.
'use strict';
const net = require('node:net');
const dns = require('node:dns');

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
  if (typeof opts.path === 'string') return connect.apply(this, args);
  const err = refuse(`connect ${opts.host ?? 'localhost'}:${opts.port}`);
  process.nextTick(() => this.destroy(err));
  return this;
};
for (const name of ['lookup', 'resolve', 'resolve4', 'resolve6']) {
  dns[name] = function (host, ...rest) {
    const cb = rest.find((a) => typeof a === 'function');
    const err = refuse(`dns ${name} ${host}`);
    if (cb) process.nextTick(() => cb(err));
  };
}
for (const name of ['lookup', 'resolve', 'resolve4', 'resolve6']) {
  dns.promises[name] = async (host) => { throw refuse(`dns ${name} ${host}`); };
}
globalThis.fetch = async (input) => { throw refuse(`fetch ${typeof input === 'string' ? input : input?.url ?? input}`); };
