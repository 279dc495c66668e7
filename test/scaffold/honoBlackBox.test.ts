import { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { bookRoom, describeBlackBox, handleWebhook, type StartApp } from './adapterBlackBox.js';

/**
 * A Hono app on the generated middleware, driven through app.fetch with Web Requests only: the Web-standard
 * runtime path (the generated suite serves the same middleware with @hono/node-server).
 */
const startHono: StartApp = async (scaffold, pool, counters) => {
  const idempotency = scaffold.createIdempotency({ pool, principal: (c: { req: { header(name: string): string | undefined } }) => c.req.header('x-user') });
  const app = new Hono();
  app.use(async (c, next) => {
    const refusal = Number(c.req.header('x-refuse'));
    if (refusal) return c.json({ error: 'refused before the action' }, refusal as ContentfulStatusCode);
    await next();
    return undefined;
  });
  app.post('/bookings', idempotency.createBooking, async (c) => {
    const answer = await bookRoom(counters, await c.req.json(), c.req.header('x-fail') !== undefined);
    return c.json(answer.json, answer.status as ContentfulStatusCode, answer.location ? { location: answer.location } : {});
  });
  app.post('/webhooks/stripe', idempotency.handleStripeWebhook, (c) => c.json(handleWebhook(counters).json));
  app.onError((_error, c) => c.text('Internal Server Error', 500));
  return { send: async (path, init) => app.fetch(new Request(`http://hono.test${path}`, init)), close: async () => undefined };
};

await describeBlackBox('hono', { 'Hono (Web Request in, Web Response out)': startHono }, { refusals: true });
