import type { Server } from 'node:http';
import type Koa from 'koa';
import { describeMiddlewareFixture } from './middlewareFixture.js';

describeMiddlewareFixture({
  fixture: 'koa',
  label: 'Koa',
  routeFile: 'src/routes/payments.ts',
  wiredRoute: "paymentsRouter.post('/payments', idempotency.createPayment, async (ctx) => {",
  // What the handler reads: ctx.state.user.id.
  // The handler's own Stripe call gets the key derived from the route's claim, read through idempotencyOf(ctx).
  keyedStripeCall: 'await stripe.paymentIntents.create({ amount, currency }, stripeRequestOptions(idempotencyContext));',
  principal: 'principal: (ctx) => (ctx as typeof ctx & AuthenticatedUser).state?.user?.id,',
  table: 'payments',
  ddl: 'CREATE TABLE payments (id serial PRIMARY KEY, payer text NOT NULL, amount int NOT NULL, currency text NOT NULL)',
  route: '/payments',
  request: { key: 'payment-5d1e', user: 'payer-1', body: { amount: 1250, currency: 'eur' } },
  serve: async (createApp) => {
    const server: Server = (createApp() as Koa).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return server;
  },
});
