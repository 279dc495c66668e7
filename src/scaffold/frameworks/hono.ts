import type { HttpFramework } from '../httpFramework.js';
import { quote } from '../tsLiteral.js';

/** Hono on Node (@hono/node-server) or a Web-standard runtime: one middleware per action on the Web Request/Response. */
export const HONO: HttpFramework = {
  module: 'hono',
  optionsType: 'HonoIdempotencyOptions',
  exports: 'idempotencyOf, idempotent, type HonoIdempotencyOptions',
  readme: {
    mount:
      "Put each action's middleware in its route, after authentication (its 401/403/429 are never stored). It reads\n   only `c.req.raw` and `c.res`, so it runs on @hono/node-server and on Web-standard runtimes with Node APIs (pg, Buffer).",
    requestName: 'c',
    principal: "(c) => c.get('jwtPayload')?.sub",
    code: (view, principalLine, pool) => {
      const routes = view.actions
        .filter((action) => action.http)
        .map((action) => `app.${(action.method ?? 'POST').toLowerCase()}(${quote(action.route)}, idempotency.${action.codeName}, ${action.codeName}Handler);`);
      return `import { Hono } from 'hono';
import { createIdempotency, createPool, POLICY } from './idempotency/index.js';

const app = new Hono();
const pool = ${pool};
const idempotency = createIdempotency({
  pool,
  ${principalLine}
});
${routes.join('\n')}`;
    },
    claimHint: 'in the handler, `idempotencyOf(c)` holds the key, the claim `ref` and the lease `signal`',
  },
  tests: {
    imports: `import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { idempotencyOf } from './hono.js';`,
    serverDecl: 'let server: ServerType;',
    setup: (action, method) => `    const idempotency = createIdempotency({ pool, principal: (c) => c.req.header('x-test-principal') });
    const app = new Hono();
    app.${method}(ACTION.route, idempotency.${action.codeName}, async (c) => {
      executions += 1;
      await recordEffect(idempotencyOf(c));
      await new Promise((resolve) => setTimeout(resolve, 30));
      if (failNext) {
        failNext = false;
        throw new Error('downstream failure');
      }
      return c.json({ execution: executions, at: Date.now() }, 201, { location: '/things/' + executions });
    });
    app.onError((_error, c) => c.text('Internal Server Error', 500)); // the failing-handler test throws on purpose
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = \`http://127.0.0.1:\${(server.address() as AddressInfo).port}\`;`,
    teardown: '    await new Promise((resolve) => server?.close(resolve));',
  },
};
