import type { HttpFramework } from '../httpFramework.js';
import { quote } from '../tsLiteral.js';

export const EXPRESS: HttpFramework = {
  module: 'express',
  optionsType: 'ExpressIdempotencyOptions',
  exports: 'asyncHandler, idempotencyOf, idempotent, type ExpressIdempotencyOptions',
  readme: {
    mount: 'Mount the middleware after authentication and body parsing, right before each handler:',
    requestName: 'req',
    code: (view, principalLine, pool) => {
      const mounts = view.actions
        .filter((action) => action.http)
        .map((action) => `app.${(action.method ?? 'POST').toLowerCase()}(${quote(action.route)}, idempotency.${action.codeName}, ${action.codeName}Handler);`);
      return `import express from 'express';
import { createIdempotency, createPool, POLICY } from './idempotency/index.js';

const pool = ${pool};
const idempotency = createIdempotency({
  pool,
  ${principalLine}
});
app.use(express.json());
${mounts.join('\n')}`;
    },
    claimHint: 'the claim is in `res.locals.idempotency`',
  },
  tests: {
    imports: `import type { AddressInfo } from 'node:net';
import express from 'express';
import { asyncHandler, idempotencyOf } from './express.js';`,
    serverDecl: "let server: ReturnType<ReturnType<typeof express>['listen']>;",
    setup: (action, method) => `    const idempotency = createIdempotency({ pool, principal: (req) => req.header('x-test-principal') });
    const app = express();
    app.use(express.json());
    // What a server-rendered form posts: repeated fields become arrays.
    app.use(express.urlencoded({ extended: false }));
    app.${method}(
      ACTION.route,
      idempotency.${action.codeName},
      asyncHandler(async (req, res) => {
        executions += 1;
        await recordEffect(idempotencyOf(req));
        await new Promise((resolve) => setTimeout(resolve, 30));
        if (failNext) {
          failNext = false;
          throw new Error('downstream failure');
        }
        res
          .status(201)
          .location('/things/' + executions)
          .json({ execution: executions, at: Date.now() });
      }),
    );
    server = app.listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = \`http://127.0.0.1:\${(server.address() as AddressInfo).port}\`;`,
    // A setup that failed before listen leaves no server: awaiting its close would hang the teardown.
    teardown: '    if (server) await new Promise((resolve) => server.close(resolve));',
    forms: true,
  },
};
