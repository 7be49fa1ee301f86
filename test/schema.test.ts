import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaSdl } from '../src/graphql/schema';

it('schema/schema.graphql is the SDL the code emits (run `npm run schema` after changing GraphQL types)', async () => {
  const committed = readFileSync(join(__dirname, '..', 'schema', 'schema.graphql'), 'utf8');
  expect(committed).toBe(await schemaSdl());
});
