import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaSdl } from '../src/graphql/schema';

/** Writes schema/schema.graphql; test/schema.test.ts fails when the committed copy is stale. */
schemaSdl().then(
  (sdl) => {
    const file = join(__dirname, '..', '..', 'schema', 'schema.graphql');
    writeFileSync(file, sdl);
    process.stdout.write(`wrote ${file}\n`);
  },
  (err: unknown) => {
    process.stderr.write(`emit-schema failed: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
