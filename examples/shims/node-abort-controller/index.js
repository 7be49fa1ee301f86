'use strict';
// Node's own classes, which its fetch accepts (see package.json's description).
module.exports = { AbortController: globalThis.AbortController, AbortSignal: globalThis.AbortSignal };
