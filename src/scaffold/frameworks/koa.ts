import type { HttpFramework } from '../httpFramework.js';
import { quote } from '../tsLiteral.js';

/** Koa 2/3 with @koa/router: one middleware per action, mounted in the route's middleware chain. */
export const KOA: HttpFramework = {
  module: 'koa',
  optionsType: 'KoaIdempotencyOptions',
  exports: 'idempotencyOf, idempotent, type KoaIdempotencyOptions',
  readme: {
    mount:
      'Put each action\'s middleware in its route, after authentication (its 401/403/429 are never stored). Koa parses\n   no bodies: without a body parser the middleware reads the raw body and leaves `ctx.request.body`/`rawBody` for you.',
    requestName: 'ctx',
    principal: '(ctx) => ctx.state.user?.id',
    code: (view, principalLine, pool) => {
      const routes = view.actions
        .filter((action) => action.http)
        .map((action) => `router.${(action.method ?? 'POST').toLowerCase()}(${quote(action.route)}, idempotency.${action.codeName}, ${action.codeName}Handler);`);
      return `import Router from '@koa/router';
import { createIdempotency, createPool, POLICY } from './idempotency/index.js';

const pool = ${pool};
const idempotency = createIdempotency({
  pool,
  ${principalLine}
});
const router = new Router();
${routes.join('\n')}
app.use(router.routes());`;
    },
    claimHint: 'in the handler, `idempotencyOf(ctx)` (or `ctx.state.idempotency`) holds the key, the claim `ref` and the lease `signal`',
  },
  tests: {
    imports: `import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { idempotencyOf } from './koa.js';`,
    serverDecl: "let server: ReturnType<Koa['listen']>;",
    setup: (action, method) => `    const idempotency = createIdempotency({
      pool,
      principal: (ctx) => ctx.get('x-test-principal') || undefined,
    });
    const app = new Koa();
    app.silent = true; // the failing-handler test throws on purpose
    const router = new Router();
    router.${method}(ACTION.route, idempotency.${action.codeName}, async (ctx) => {
      executions += 1;
      await recordEffect(idempotencyOf(ctx));
      await new Promise((resolve) => setTimeout(resolve, 30));
      if (failNext) {
        failNext = false;
        throw new Error('downstream failure');
      }
      ctx.status = 201;
      ctx.set('location', '/things/' + executions);
      ctx.body = { execution: executions, at: Date.now() };
    });
    app.use(router.routes());
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = \`http://127.0.0.1:\${(server.address() as AddressInfo).port}\`;`,
    teardown: '    await new Promise((resolve) => server?.close(resolve));',
  },
};
