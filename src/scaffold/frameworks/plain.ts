import type { HttpFramework } from '../httpFramework.js';
import { quote } from '../tsLiteral.js';

/**
 * No web framework (workers, scripts) or one without an adapter of its own (tRPC, GraphQL): a plain wrapper
 * around a function, keyed by the caller's { scope, key, fingerprintInput }, replaying the stored JSON result.
 */
export const PLAIN: HttpFramework = {
  module: 'plain',
  optionsType: 'PlainIdempotencyOptions',
  exports: 'idempotencyOf, idempotent, plainWrappers, problemForError, InvalidKeyError, PrincipalMissingError, type PlainCall, type PlainIdempotencyOptions, type PlainIdempotent',
  wrappers: 'plainWrappers',
  readme: {
    mount:
      'Wrap the function that does the work, in a tRPC procedure, a GraphQL resolver, a queue handler or a script. It\n   runs once per (scope, key); repeats get its stored JSON result, other input under the same key throws MismatchError.\n   Each call passes its `scope`; `principal` is only the fallback for calls that do not (undefined: PrincipalMissingError).',
    requestName: '',
    principal: '() => undefined',
    code: (view, principalLine, pool) => {
      const first = view.actions[0];
      const name = first?.codeName ?? 'createPayment';
      return `import { createIdempotency, createPool, POLICY } from './idempotency/index.js';

const idempotency = createIdempotency({
  pool: ${pool},
  ${principalLine}
});
// e.g. a tRPC mutation: the same key and input run ${quote(name)} once; a repeat returns the stored result.
const result = await idempotency.idempotent(${quote(name)}, { scope: ctx.user.id, key: input.idempotencyKey, fingerprintInput: input }, (context) => work(input, context));`;
    },
    claimHint: 'the wrapped function receives the context; deeper code calls `idempotencyOf()`',
  },
  tests: {
    imports: `import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { idempotent, problemForError } from './plain.js';`,
    serverDecl: 'let server: http.Server;',
    setup: () => `    const idempotency = createIdempotency({ pool, principal: () => undefined });
    const run = idempotent(ACTION, { core: idempotency.core, principal: () => undefined });
    // The wrapper behind a transport of the test's own, so the shared HTTP scenarios apply: the caller's header
    // becomes the call's scope and key, params and body its input; the errors become the adapters' answers.
    server = http.createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        const header = (name: string) =>
          typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined;
        try {
          const call = {
            scope: header('x-test-principal'),
            key: header(KEY_HEADER.toLowerCase()),
            fingerprintInput: { ...body, ...routeParams(ACTION.route, url.pathname) },
          };
          const { result, replayed } = await run.detailed(call, async (context) => {
            executions += 1;
            await recordEffect(context);
            await new Promise((resolve) => setTimeout(resolve, 30));
            if (failNext) {
              failNext = false;
              throw new Error('downstream failure');
            }
            return { execution: executions, at: Date.now() };
          });
          const headers: Record<string, string> = {
            'content-type': 'application/json',
            location: '/things/' + result.execution,
          };
          if (replayed) headers[REPLAY_HEADER] = 'true';
          res.writeHead(201, headers).end(JSON.stringify(result));
        } catch (error) {
          // The adapters' answers: Retry-After only where a retry can succeed (409 in flight, 503).
          const problem = problemForError(error, POLICY);
          if (!problem) return void res.writeHead(500).end('Internal Server Error');
          const { retryAfterSeconds, ...body } = problem;
          res
            .writeHead(problem.status, {
              'content-type': 'application/problem+json',
              ...(retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) }),
            })
            .end(JSON.stringify(body));
        }
      })();
    });
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    // A consumer's or job's "route" is a queue name or schedule, not a path: it goes after a slash.
    baseUrl = \`http://127.0.0.1:\${(server.address() as AddressInfo).port}\${ACTION.route.startsWith('/') ? '' : '/'}\`;`,
    teardown: '    await new Promise((resolve) => server?.close(resolve));',
  },
};
