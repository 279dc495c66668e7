// Fastify app on the generated route hooks, wired as the generated README shows.
import Fastify from 'fastify';
import { announce, pay, principal, scaffold, storePool } from './paymentAction.mjs';

const idempotency = scaffold.createIdempotency({ pool: storePool, principal: (request) => principal(request.headers) });
const app = Fastify();
app.post('/payments', idempotency.createPayment, async (request, reply) => {
  const context = scaffold.idempotencyOf(request);
  const result = await pay({ context, pause: request.headers['x-fault-pause'], body: request.body });
  return reply.code(201).send(result);
});
await app.listen({ port: 0, host: '127.0.0.1' });
announce(app.server.address().port);
