// Koa app on the generated middleware, wired as the generated README shows (no body parser: the middleware reads it).
import Router from '@koa/router';
import Koa from 'koa';
import { announce, pay, principal, scaffold, storePool } from './paymentAction.mjs';

const idempotency = scaffold.createIdempotency({ pool: storePool, principal: (ctx) => principal(ctx.headers) });
const app = new Koa();
const router = new Router();
router.post('/payments', idempotency.createPayment, async (ctx) => {
  const result = await pay({ context: scaffold.idempotencyOf(ctx), pause: ctx.get('x-fault-pause') || undefined, body: ctx.request.body });
  ctx.status = 201;
  ctx.body = result;
});
app.use(router.routes());
const server = app.listen(0, '127.0.0.1', () => announce(server.address().port));
