import type { HttpFramework } from '../httpFramework.js';
import { houseQuote } from '../houseStyle.js';
import { commentText, quote } from '../tsLiteral.js';

/** Where the App Router keeps a route's handler: `/bookings/:id/cancellations` → `app/bookings/[id]/cancellations/route.ts`. */
function routeFile(route: string): string {
  const path = route.split('/').filter(Boolean).map((segment) => (segment.startsWith(':') ? `[${segment.slice(1)}]` : segment));
  // A comment inside the README's code fence: no line breaks, and no backticks that could close the fence.
  return commentText(['app', ...path, 'route.ts'].join('/')).replace(/`/g, "'");
}

/**
 * Next.js: App Router route handlers, Pages API routes and Server Actions, all on the Web Request/Response or node
 * req/res they already receive; no import from next, so any Next version (13 to 15) type-checks.
 */
export const NEXT: HttpFramework = {
  module: 'next',
  optionsType: 'NextIdempotencyOptions',
  exports: 'idempotencyOf, idempotent, nextWrappers, InvalidKeyError, PrincipalMissingError, type NextIdempotencyOptions, type NextIdempotentAction, type PagesApiRequest',
  wrappers: 'nextWrappers',
  readme: {
    mount:
      "Create the wiring once in a server-only module and wrap each route handler (`withIdempotency`), Pages API route\n   (`withPagesIdempotency`) or Server Action (`idempotentAction`, the key is its first argument) by action name.\n   `principal` reads the session the way the app does (`auth()` below stands for yours); it runs before the claim,\n   so a refusal is never stored.",
    requestName: 'request',
    principal: 'async () => (await auth())?.user?.id',
    code: (view, principalLine, pool) => {
      const routes = view.actions
        .filter((action) => action.http)
        .map((action) => `export const ${(action.method ?? 'POST').toUpperCase()} = idempotency.withIdempotency(${quote(action.codeName)}, ${action.codeName}Handler); // ${routeFile(action.route)}`);
      return `import { createIdempotency, createPool, POLICY } from './idempotency/index.js';

export const idempotency = createIdempotency({
  pool: ${pool},
  ${principalLine}
});
// One per route.ts; each handler keeps its (request, { params }) signature:
${routes.join('\n')}`;
    },
    claimHint: 'in the handler, `idempotencyOf(request)` (`idempotencyOf()` in a Server Action) holds the key, the claim `ref` and the lease `signal`',
  },
  tests: {
    imports: `import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { idempotencyOf } from './next.js';`,
    serverDecl: 'let server: http.Server;',
    setup: (action) => `    const idempotency = createIdempotency({
      pool,
      principal: (request) =>
        request instanceof Request ? (request.headers.get('x-test-principal') ?? undefined) : undefined,
    });
    const handler = idempotency.withIdempotency(
      ${houseQuote(action.codeName)},
      async (request: Request, _context: { params: Promise<Record<string, string>> }) => {
        executions += 1;
        await recordEffect(idempotencyOf(request));
        await new Promise((resolve) => setTimeout(resolve, 30));
        if (failNext) {
          failNext = false;
          throw new Error('downstream failure');
        }
        return Response.json(
          { execution: executions, at: Date.now() },
          { status: 201, headers: { location: '/things/' + executions } },
        );
      },
    );
    // What Next does around a route handler, reduced to the suite's needs: a Web Request in, the route's params, a
    // thrown handler answered 500, the Response's bytes out.
    server = http.createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        const headers = new Headers();
        for (const [name, values] of Object.entries(req.headersDistinct))
          for (const value of values ?? []) headers.append(name, value);
        const request = new Request(url, {
          method: req.method ?? 'GET',
          headers,
          ...(chunks.length > 0 ? { body: new Uint8Array(Buffer.concat(chunks)) } : {}),
        });
        const response = await handler(request, {
          params: Promise.resolve(routeParams(ACTION.route, url.pathname)),
        }).catch(() => new Response('Internal Server Error', { status: 500 }));
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      })();
    });
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = \`http://127.0.0.1:\${(server.address() as AddressInfo).port}\`;`,
    teardown: '    await new Promise((resolve) => server?.close(resolve));',
  },
};
