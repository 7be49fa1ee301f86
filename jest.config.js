const { readFileSync } = require('node:fs');
const swcrc = JSON.parse(readFileSync(`${__dirname}/.swcrc`, 'utf8'));
delete swcrc.$schema;

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swcrc, swcrc: false }] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['reflect-metadata'],
  // Two cores: two workers keep the machine responsive; each test file has its own database.
  maxWorkers: 2,
  // A worker ends once the event loop is empty, then Node tears its environment down. Each test
  // file's vm context stays in the worker's heap until then (V8 keeps it through a template's
  // instantiation cache, whatever the file did: seen in heap snapshots of files that start
  // nothing, on Node 24 and 26), some 30 MB a file: the teardown of a worker that ran forty files
  // outlasts jest's default 500 ms, and jest printed "A worker process has failed to exit
  // gracefully" with no handle left open (the 'exit' event came 0.1 s after the last file).
  workerGracefulExitTimeout: 5_000,
  testTimeout: 30_000,
};
