import type { HttpFramework } from '../httpFramework.js';
import { quote } from '../tsLiteral.js';

export const FASTIFY: HttpFramework = {
  module: 'fastify',
  optionsType: 'FastifyIdempotencyOptions',
  exports: 'idempotencyOf, idempotent, type FastifyIdempotencyOptions, type IdempotentRoute',
  readme: {
    mount:
      "Pass each action's hooks as its route options. Authenticate in an onRequest hook (it runs first, so its\n   401/403/429 are never stored). With a preHandler of your own, run it first:\n   `{ ...idempotency.name, preHandler: [yours, idempotency.name.preHandler] }`.",
    requestName: 'request',
    code: (view, principalLine, pool) => {
      const routes = view.actions
        .filter((action) => action.http)
        .map((action) => `app.${(action.method ?? 'POST').toLowerCase()}(${quote(action.route)}, idempotency.${action.codeName}, ${action.codeName}Handler);`);
      return `import Fastify from 'fastify';
import { createIdempotency, createPool, POLICY } from './idempotency/index.js';

const app = Fastify();
const pool = ${pool};
const idempotency = createIdempotency({
  pool,
  ${principalLine}
});
${routes.join('\n')}`;
    },
    claimHint: 'in the handler, `idempotencyOf(request)` holds the key, the claim `ref` and the lease `signal`',
  },
  tests: {
    imports: `import Fastify, { type FastifyInstance } from 'fastify';
import { idempotencyOf } from './fastify.js';`,
    serverDecl: 'let app: FastifyInstance;',
    setup: (action, method) => `    const idempotency = createIdempotency({
      pool,
      principal: (request) => request.headers['x-test-principal']?.toString(),
    });
    app = Fastify();
    app.${method}(ACTION.route, idempotency.${action.codeName}, async (request, reply) => {
      executions += 1;
      await recordEffect(idempotencyOf(request));
      await new Promise((resolve) => setTimeout(resolve, 30));
      if (failNext) {
        failNext = false;
        throw new Error('downstream failure');
      }
      return reply
        .code(201)
        .header('location', '/things/' + executions)
        .send({ execution: executions, at: Date.now() });
    });
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });`,
    teardown: '    await app?.close();',
  },
};
