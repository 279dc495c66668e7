// Hono app on the generated middleware, served by @hono/node-server, wired as the generated README shows.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { announce, pay, principal, scaffold, storePool } from './paymentAction.mjs';

const idempotency = scaffold.createIdempotency({ pool: storePool, principal: (c) => principal({ 'x-user': c.req.header('x-user') }) });
const app = new Hono();
app.post('/payments', idempotency.createPayment, async (c) => {
  const result = await pay({ context: scaffold.idempotencyOf(c), pause: c.req.header('x-fault-pause'), body: await c.req.json() });
  return c.json(result, 201);
});
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => announce(info.port));
