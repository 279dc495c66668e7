import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import { bookRoom, describeBlackBox, handleWebhook, overHttp, type StartApp } from './adapterBlackBox.js';

/**
 * A Koa app on the generated middleware, without a body parser (the middleware reads the raw body and leaves it
 * parsed for the handler); an upstream middleware stands in for auth and rate limiting.
 */
const startKoa: StartApp = async (scaffold, pool, counters) => {
  const idempotency = scaffold.createIdempotency({ pool, principal: (ctx: Context) => ctx.get('x-user') || undefined });
  const app = new Koa();
  app.silent = true; // x-fail throws on purpose
  app.use(async (ctx, next) => {
    const refusal = Number(ctx.get('x-refuse'));
    if (!refusal) return next();
    ctx.status = refusal;
    ctx.body = { error: 'refused before the action' };
  });
  const router = new Router();
  router.post('/bookings', idempotency.createBooking, async (ctx) => {
    const answer = await bookRoom(counters, (ctx.request as { body?: { roomId?: string } }).body, ctx.get('x-fail') !== '');
    ctx.status = answer.status;
    if (answer.location) ctx.set('location', answer.location);
    ctx.body = answer.json;
  });
  router.post('/webhooks/stripe', idempotency.handleStripeWebhook, (ctx) => {
    ctx.body = handleWebhook(counters).json;
  });
  app.use(router.routes());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return overHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => new Promise((resolve) => server.close(() => resolve())));
};

await describeBlackBox('koa', { 'Koa + @koa/router': startKoa }, { refusals: true });
