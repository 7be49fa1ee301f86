// Preloaded (`node --require`) into a service process a test starts: on SIGUSR2 it writes the
// files of every CommonJS module the process has loaded so far, one per line, to
// LOADED_MODULES_FILE (test/memory.test.ts: what a production process loads).
'use strict';
const { writeFileSync } = require('node:fs');

process.on('SIGUSR2', () => writeFileSync(process.env.LOADED_MODULES_FILE, Object.keys(require.cache).join('\n')));
