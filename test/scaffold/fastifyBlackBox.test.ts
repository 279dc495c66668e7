import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { bookRoom, describeBlackBox, overHttp, type StartApp } from './adapterBlackBox.js';

const userOf = (request: FastifyRequest) => request.headers['x-user']?.toString();

/**
 * A Fastify app on the generated hooks for the bookings design: an onRequest hook stands in for auth and rate
 * limiting (it answers before the action), the booking handler is slow enough for duplicates to overlap.
 */
const startFastify: StartApp = async (scaffold, pool, counters) => {
  const idempotency = scaffold.createIdempotency({ pool, principal: userOf });
  const app = Fastify();
  app.addHook('onRequest', async (request, reply) => {
    const refusal = Number(request.headers['x-refuse']);
    if (refusal) return reply.code(refusal).send({ error: 'refused before the action' });
    return undefined;
  });
  app.post('/bookings', idempotency.createBooking, async (request: FastifyRequest<{ Body: { roomId?: string } }>, reply: FastifyReply) => {
    const answer = await bookRoom(counters, request.body, request.headers['x-fail'] !== undefined);
    if (answer.location) void reply.header('location', answer.location);
    return reply.code(answer.status).send(answer.json);
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return overHttp(url, () => app.close());
};

await describeBlackBox('fastify', { 'Fastify app on the generated hooks': startFastify }, { refusals: true });
