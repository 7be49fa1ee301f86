import { z } from 'zod';
import { parseInput } from '../../core/validation';
import { reply, type RouteDef } from '../../http/routes';
import { FIXTURES, type TestingService } from './testing.service';

const resetInput = z.object({ fixture: z.enum(FIXTURES, { error: `must be one of: ${FIXTURES.join(', ')}` }).optional() }).strict();
const mailsQuery = z.object({ to: z.string().trim().min(1, 'must not be empty').optional() }).strict();

/**
 * The test server's routes (mounted by src/test-server.ts only; under `npm start` /__test/* is 404).
 * @public loaded by src/test-server.ts with a lazy require, which knip cannot follow.
 */
export function testingRoutes(testing: TestingService): RouteDef[] {
  return [
    {
      method: 'post',
      path: '/__test/reset',
      handler: async (req) => {
        const { fixture } = parseInput(resetInput, req.body ?? {});
        await testing.reset(fixture);
        return reply(undefined, 204);
      },
    },
    {
      method: 'get',
      path: '/__test/mails',
      handler: async (req) => {
        const { to } = parseInput(mailsQuery, req.query);
        return reply(await testing.mails(to));
      },
    },
    {
      method: 'delete',
      path: '/__test/mails',
      handler: async () => {
        testing.clearMails();
        return reply(undefined, 204);
      },
    },
  ];
}
