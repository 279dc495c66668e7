/* global Buffer, Headers, Request, Response */
// A Next.js App Router route handler on the generated wrapper. Next itself is not booted: a node server does what
// its router does for one route (a Web Request in, a thrown handler answered 500, the Response's bytes out).
import http from 'node:http';
import { announce, pay, principal, scaffold, storePool } from './paymentAction.mjs';

const idempotency = scaffold.createIdempotency({
  pool: storePool,
  principal: (request) => principal({ 'x-user': request?.headers.get('x-user') ?? undefined }),
});
// app/payments/route.ts
const POST = idempotency.withIdempotency('createPayment', async (request) => {
  const result = await pay({ context: scaffold.idempotencyOf(request), pause: request.headers.get('x-fault-pause') ?? undefined, body: await request.json() });
  return Response.json(result, { status: 201 });
});

const server = http.createServer((req, res) => {
  void (async () => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = new Headers();
    for (const [name, values] of Object.entries(req.headersDistinct)) for (const value of values) headers.append(name, value);
    const request = new Request(new URL(req.url, 'http://127.0.0.1'), { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const response = await POST(request, { params: Promise.resolve({}) }).catch((error) => {
      process.stderr.write(`${error?.stack ?? error}\n`);
      return new Response('Internal Server Error', { status: 500 });
    });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  })();
});
server.listen(0, '127.0.0.1', () => announce(server.address().port));
