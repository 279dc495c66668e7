import { describe, expect, it } from 'vitest';
import type { Inspection } from '../../src/inspect/types.js';
import { actionsFromInspection, isAuthRoute, nameFromRoute } from '../../src/questions/actionsFromInspection.js';
import { parseActionText } from '../../src/questions/parseActionText.js';
import { pickCreates } from '../../src/questions/pickCreates.js';
import { settleAction } from '../../src/questions/completeAction.js';

const STACK: Inspection['stack'] = { language: 'typescript', frameworks: ['express'], databases: ['postgres'], orms: [], brokers: [], testFramework: 'vitest', packageManager: 'npm', payments: ['stripe', 'adyen'] };

describe('actionsFromInspection', () => {
  it('offers a heartbeat timer unchecked: every process runs its own on purpose', () => {
    const inspection: Inspection = {
      root: '/app',
      stack: STACK,
      warnings: [],
      findings: [
        { kind: 'cron', id: 'setInterval captureEvent', file: 'src/telemetry.ts', line: 121, scheduler: 'setInterval', name: 'captureEvent', schedule: 'every HEARTBEAT_INTERVAL_MS' },
        { kind: 'cron', id: 'setInterval expireHolds', file: 'src/holds.ts', line: 8, scheduler: 'setInterval', name: 'expireHolds', schedule: 'every 60000 ms' },
      ],
    };
    const candidates = actionsFromInspection(inspection);
    expect(candidates.map((c) => [c.action.name, c.checked])).toEqual([
      ['captureEvent', false],
      ['expireHolds', true],
    ]);
    expect(candidates[0]?.note).toContain('heartbeat or telemetry timer');
  });

  it('keys a route another system reports events to by the event id in its body, for all callers (nestjs-super@8e6b270)', () => {
    const endpoint = (id: string, path: string, handler: string, bodyFields: string[], extra: object = {}) => ({ kind: 'endpoint' as const, id, file: `src/${id}.ts`, line: 3, method: 'POST' as const, path, handler, framework: 'nestjs', prefixResolved: true, bodyFields, ...extra });
    const inspection: Inspection = {
      root: '/shop',
      stack: STACK,
      warnings: [],
      findings: [
        // A bank-transfer gateway's notification, guarded by an API key: the body carries the gateway's transaction id.
        endpoint('receiver', '/payment/receiver', 'PaymentController.receiver', ['id', 'gateway', 'transferType', 'transferAmount', 'referenceCode']),
        endpoint('hook', '/webhooks/shipping', 'ShippingController.handle', ['shipmentId', 'status', 'eventId']),
        endpoint('ipn', '/momo/ipn', 'MomoController.notify', []),
        // Registering a webhook (the resource is the webhook itself) and a plain POST stay ordinary routes.
        endpoint('register', '/teams/:teamId/webhooks', 'WebhookController.createWebhook', ['url', 'eventTriggers', 'secret']),
        endpoint('notifications', '/notifications', 'NotificationController.send', ['to', 'text']),
      ],
    };
    const byName = new Map(actionsFromInspection(inspection).map((c) => [c.action.source, c]));
    const receiver = byName.get('src/receiver.ts:3')!;
    expect(receiver.action).toMatchObject({ trigger: 'http', scope: 'global', key: { source: 'derived', from: ['id', 'transferType'] }, significantFields: ['id', 'transferType'] });
    expect(receiver.checked).toBe(true);
    expect(receiver.group).toBe('Webhooks');
    expect(receiver.note).toContain('it sends no Idempotency-Key and is no signed-in user');
    // `status` beside the id: where the id names the resource, each status change is its own event.
    expect(byName.get('src/hook.ts:3')!.action).toMatchObject({ scope: 'global', key: { source: 'derived', from: ['eventId', 'status'] }, significantFields: ['eventId', 'status'] });
    expect(byName.get('src/ipn.ts:3')!.action.key).toEqual({ source: 'derived', from: ['id'] });
    expect(byName.get('src/ipn.ts:3')!.note).toContain('its body was not read');
    for (const plain of ['src/register.ts:3', 'src/notifications.ts:3']) {
      expect(byName.get(plain)!.action.key).toBeUndefined();
      expect(byName.get(plain)!.action.scope).toBeUndefined();
    }
  });

  it('offers a GET that touches payments unchecked: links and redirects cannot send an Idempotency-Key', () => {
    const inspection: Inspection = {
      root: '/auth',
      stack: STACK,
      warnings: [],
      findings: [
        { kind: 'endpoint', id: 'a', file: 'src/callback.ts', line: 17, method: 'GET', path: '/oidc', framework: 'hono', prefixResolved: true, touchesPayment: true },
        { kind: 'endpoint', id: 'b', file: 'src/orders.ts', line: 9, method: 'POST', path: '/orders', framework: 'hono', prefixResolved: true, touchesPayment: true },
        // adyen-examples/adyen-node-online-payments@1ad09b5: app.all('/handleShopperRedirect') takes the shopper's GET back.
        { kind: 'endpoint', id: 'c', file: 'index.js', line: 197, method: 'ALL', path: '/handleShopperRedirect', framework: 'express', prefixResolved: true, touchesPayment: true },
        // A Pages API route is ALL only because it checks no method: the app's own fetch POSTs to it.
        { kind: 'endpoint', id: 'd', file: 'pages/api/checkout.ts', line: 5, method: 'ALL', path: '/api/checkout', framework: 'nextjs', prefixResolved: true, touchesPayment: true },
      ],
    };
    const candidates = actionsFromInspection(inspection);
    expect(candidates.map((c) => [c.action.route, c.checked])).toEqual([
      ['GET /oidc', false],
      ['POST /orders', true],
      ['POST /handleShopperRedirect', false],
      ['POST /api/checkout', true],
    ]);
    expect(candidates[0]?.note).toMatch(/^a GET that reaches a payment provider: its GET callers \(links, redirects\) cannot send an Idempotency-Key; key it by a value/);
    expect(candidates[2]?.note).toMatch(/^a route for every method, GET included, that reaches a payment provider: /);
  });

  it('orders payment-touching actions first, names them after the handler, and offers saga steps for several provider calls', () => {
    const inspection: Inspection = {
      root: '/shop',
      stack: STACK,
      warnings: [],
      findings: [
        { kind: 'endpoint', id: 'a', file: 'src/auth.ts', line: 3, method: 'POST', path: '/login', framework: 'express', prefixResolved: true, bodyFields: ['email'] },
        { kind: 'endpoint', id: 'b', file: 'src/orders.ts', line: 9, method: 'POST', path: '/orders', framework: 'express', prefixResolved: true, handler: 'checkout', bodyFields: ['cartId'], touchesPayment: true },
        { kind: 'payment', id: 'c', file: 'src/orders.ts', line: 12, provider: 'stripe', operation: 'paymentIntents.create', hasProviderKey: false, enclosingFunction: 'checkout' },
        { kind: 'payment', id: 'd', file: 'src/orders.ts', line: 14, provider: 'stripe', operation: 'transfers.create', hasProviderKey: false, enclosingFunction: 'checkout' },
        { kind: 'consumer', id: 'e', file: 'src/worker.ts', line: 2, broker: 'kafka', queue: 'order-shipped', dedupes: false },
        { kind: 'endpoint', id: 'f', file: 'src/orders.ts', line: 30, method: 'DELETE', path: '/orders/:orderId', framework: 'express', prefixResolved: false },
      ],
    };
    const candidates = actionsFromInspection(inspection);
    expect(candidates.map((c) => [c.group, c.action.name, c.checked])).toEqual([
      ['Touches payments', 'checkout', true],
      ['Message consumers', 'consumeOrderShipped', true],
      ['HTTP endpoints', 'createLogin', false],
      ['HTTP endpoints', 'deleteOrder', false],
    ]);
    // Two providers in the project, but the calls inside the handler say which one.
    expect(candidates[0]?.action.provider).toBe('stripe');
    expect(candidates[0]?.externalCalls.map((c) => c.operation)).toEqual(['paymentIntents.create', 'transfers.create']);
    expect(candidates[3]?.action.significantFields).toEqual(['orderId']);
    expect(candidates[3]?.note).toContain('prefix');
    expect(candidates[3]?.note).toContain('idempotent by nature');
    expect(candidates[2]?.note).toContain('sign-in');
  });

  it('tells apart actions that would share a name by the folder where their sources part, else by number', () => {
    // The shape of Vegetam/microservices-ddd-kafka@afdd111: two services of one package consume order.cancelled.
    const consumer = (id: string, file: string, queue: string): Inspection['findings'][number] => ({ kind: 'consumer', id, file, line: 5, broker: 'kafka', queue, dedupes: false });
    const names = (findings: Inspection['findings']) => actionsFromInspection({ root: '/p', stack: STACK, warnings: [], findings }).map((c) => c.action.name);
    expect(names([consumer('a', 'src/NotificationService/kafka/EventConsumer.ts', 'order.cancelled'), consumer('b', 'src/PaymentService/kafka/EventConsumer.ts', 'order.cancelled'), consumer('c', 'src/PaymentService/kafka/EventConsumer.ts', 'order.created')])).toEqual([
      'consumeOrderCancelledNotificationService',
      'consumeOrderCancelledPaymentService',
      'consumeOrderCreated',
    ]);
    // One folder: numbered, as before.
    expect(names([consumer('a', 'src/kafka/a.ts', 'orders'), consumer('b', 'src/kafka/b.ts', 'orders')])).toEqual(['consumeOrders', 'consumeOrders2']);
    // Folders that do not part into names (a digit) fall back to numbers too.
    expect(names([consumer('a', 'src/2024/a.ts', 'orders'), consumer('b', 'src/2025/a.ts', 'orders')])).toEqual(['consumeOrders', 'consumeOrders2']);
  });

  it('a consumer of many topics is named for its file, and every name and topic list fits the config (Bun-Hono-KafkaJS-Boilerplate@768db55)', () => {
    const topics = ['auth.events', 'products.created', 'products.updated', 'products.deleted', 'products.restored', 'users.created', 'users.restored', 'users.deleted'];
    const consumer = (file: string, queue: string): Inspection['findings'][number] => ({ kind: 'consumer', id: file, file, line: 39, broker: 'kafka', queue, dedupes: false });
    const actions = (findings: Inspection['findings']) => actionsFromInspection({ root: '/p', stack: STACK, warnings: [], findings }).map((c) => c.action);
    expect(actions([consumer('service-user/src/modules/user/consumers/ActivityLogConsumer.ts', topics.join(','))])[0]).toMatchObject({ name: 'consumeActivityLog', route: topics.join(',') });
    const many = Array.from({ length: 60 }, (_, i) => `tenant.events.partition-${i}`).join(',');
    const [long] = actions([consumer('src/consumer.ts', many), consumer(`src/${'a'.repeat(150)}.ts`, 'x'.repeat(150))]);
    expect(long!.route!.length).toBeLessThanOrEqual(500);
    expect(long!.route).toMatch(/^tenant\.events\.partition-0,.* and \d+ more$/);
    for (const action of actions([consumer(`src/${'a'.repeat(150)}.ts`, 'x'.repeat(150)), consumer(`src/b.ts`, 'x'.repeat(150))])) expect(action.name.length).toBeLessThanOrEqual(100);
  });

  it('names tRPC procedures by their path and leaves those that delete or set by name unchecked, like DELETE and PUT', () => {
    // The shape of t3-oss/create-t3-turbo@e69b585: postRouter's create and delete procedures.
    const procedure = (id: string, line: number, path: string, handler: string): Inspection['findings'][number] => ({ kind: 'endpoint', id, file: 'packages/api/src/router/post.ts', line, method: 'POST', path, framework: 'trpc', prefixResolved: false, handler, transport: 'trpc', insertsRecord: true });
    const inspection: Inspection = { root: '/p', stack: STACK, warnings: [], findings: [procedure('a', 27, '/post.create', 'create'), procedure('b', 31, '/post.delete', 'delete'), procedure('c', 40, '/billing.invoices.void', 'void'), procedure('d', 50, '/sendInvite', 'sendInvite'), procedure('e', 60, '/profile.setAvatar', 'setAvatar')] };
    const candidates = actionsFromInspection(inspection);
    expect(candidates.map((c) => [c.action.name, c.checked])).toEqual([
      ['createPost', false],
      ['deletePost', false],
      ['voidBillingInvoice', true],
      ['sendInvite', true],
      ['setAvatar', false],
    ]);
    expect(candidates[1]?.note).toBe('deletes by its name, as DELETE would: a repeat leaves the same state');
    expect(candidates[4]?.note).toContain('sets by its name, as PUT would');
    // No mount prefix to resolve for a procedure.
    expect(candidates.map((c) => c.note ?? '').join(' ')).not.toContain('prefix');
    expect(pickCreates(candidates).map((a) => a.name)).toEqual(['createPost', 'voidBillingInvoice', 'sendInvite']);
  });

  it('leaves secrets and per-submission tokens out of the fingerprint fields, and says so when init settles the action', () => {
    // The shape of brocoders/nestjs-boilerplate@9620f15: POST /v1/users with a password among its DTO's fields.
    const inspection: Inspection = { root: '/p', stack: STACK, warnings: [], findings: [{ kind: 'endpoint', id: 'a', file: 'src/users.controller.ts', line: 50, method: 'POST', path: '/v1/users', framework: 'nestjs', prefixResolved: true, handler: 'create', bodyFields: ['email', 'password', 'firstName', 'captchaToken'], insertsRecord: true }] };
    const [candidate] = actionsFromInspection(inspection);
    expect(candidate?.action.significantFields).toEqual(['email', 'firstName']);
    expect(candidate?.secretFields).toEqual(['password', 'captchaToken']);
    const assumptions: string[] = [];
    settleAction(candidate!.action, candidate, assumptions);
    expect(assumptions).toEqual([expect.stringMatching(/^createUser: password, captchaToken are left out of the fingerprint: a secret or a token made anew per submission is not the intent/)]);
  });

  it('tells sign-in, session and token routes by their last segment, not by an /auth folder above them', () => {
    for (const route of ['/login', '/v1/auth/login', '/auth/sign-out', '/api/auth/:all*', '/auth/[...nextauth]', '/v1/auth/refresh-tokens', '/sessions', '/oauth/token', '/auth/google/callback', '/auth']) {
      expect(isAuthRoute(route), route).toBe(true);
    }
    // node-express-boilerplate@179ae84 keeps sign-up and e-mail sends under /v1/auth.
    for (const route of ['/v1/auth/register', '/v1/auth/send-verification-email', '/v1/auth/forgot-password', '/orders', '/payments/callback', '/']) {
      expect(isAuthRoute(route), route).toBe(false);
    }
  });

  it('names an inline handler after the one service method it hands the request to, unless a bare verb', () => {
    const endpoint = (id: string, path: string, delegate: string): Inspection['findings'][number] => ({ kind: 'endpoint', id, file: 'src/routes/operation.route.ts', line: 9, method: 'POST', path, framework: 'fastify', prefixResolved: true, delegate });
    const inspection: Inspection = { root: '/p', stack: STACK, warnings: [], findings: [endpoint('a', '/operations/payment-intents/:id', 'modifyPayment'), endpoint('b', '/orders', 'create')] };
    expect(actionsFromInspection(inspection).map((c) => c.action.name).sort()).toEqual(['createOrder', 'modifyPayment']);
  });

  it('names generic handlers after the provider operation or the route\'s own verb', () => {
    const inspection: Inspection = {
      root: '/saas',
      stack: { ...STACK, frameworks: ['nextjs'], payments: ['stripe'] },
      warnings: [],
      findings: [
        { kind: 'endpoint', id: 'a', file: 'app/api/checkout/route.ts', line: 4, method: 'POST', path: '/api/checkout', framework: 'nextjs', prefixResolved: true, handler: 'POST', touchesPayment: true },
        { kind: 'payment', id: 'b', file: 'app/api/checkout/route.ts', line: 6, provider: 'stripe', operation: 'checkout.sessions.create', hasProviderKey: false, enclosingFunction: 'POST' },
        { kind: 'endpoint', id: 'c', file: 'app/api/categories/route.ts', line: 3, method: 'POST', path: '/api/categories', framework: 'nextjs', prefixResolved: true, handler: 'POST' },
        { kind: 'endpoint', id: 'd', file: 'app/api/subscriptions/[id]/cancel/route.ts', line: 3, method: 'POST', path: '/api/subscriptions/[id]/cancel', framework: 'nextjs', prefixResolved: true, handler: 'POST' },
      ],
    };
    expect(actionsFromInspection(inspection).map((c) => c.action.name)).toEqual(['createCheckoutSession', 'createCategory', 'cancelSubscription']);
  });
});

describe('wizard pre-selection', () => {
  it('pre-checks only external or money effects and records a duplicate would harm; a plain database POST is shown unchecked with the reason', () => {
    const inspection: Inspection = {
      root: '/blog',
      stack: { ...STACK, payments: ['stripe'] },
      warnings: [],
      findings: [
        { kind: 'endpoint', id: 'a', file: 'src/posts.ts', line: 3, method: 'POST', path: '/categories', framework: 'express', prefixResolved: true, handler: 'createCategory' },
        { kind: 'endpoint', id: 'b', file: 'src/posts.ts', line: 9, method: 'PATCH', path: '/profile', framework: 'express', prefixResolved: true, handler: 'updateProfile' },
        { kind: 'endpoint', id: 'c', file: 'src/orders.ts', line: 4, method: 'POST', path: '/orders', framework: 'express', prefixResolved: true, handler: 'placeOrder' },
        { kind: 'endpoint', id: 'd', file: 'src/invites.ts', line: 4, method: 'POST', path: '/teams/:teamId/invitations', framework: 'express', prefixResolved: true, handler: 'inviteMember' },
        { kind: 'endpoint', id: 'e', file: 'src/billing.ts', line: 4, method: 'POST', path: '/billing/portal', framework: 'express', prefixResolved: true, handler: 'openPortal', touchesPayment: true },
        { kind: 'endpoint', id: 'f', file: 'src/auth.ts', line: 4, method: 'POST', path: '/signInWithEmail', framework: 'nextjs', prefixResolved: false, handler: 'signInWithEmail', transport: 'server-action' },
        { kind: 'endpoint', id: 'g', file: 'src/auth.ts', line: 9, method: 'POST', path: '/updateEmail', framework: 'nextjs', prefixResolved: false, handler: 'updateEmail', transport: 'server-action' },
        // adyen-examples/adyen-node-online-payments@1ad09b5: lists the methods a shopper may pay with.
        { kind: 'endpoint', id: 'h', file: 'index.js', line: 49, method: 'POST', path: '/api/paymentMethods', framework: 'express', prefixResolved: true },
        { kind: 'endpoint', id: 'i', file: 'src/orders.ts', line: 20, method: 'POST', path: '/api/order-status', framework: 'express', prefixResolved: true, handler: 'orderStatus' },
      ],
    };
    const byName = new Map(actionsFromInspection(inspection).map((c) => [c.action.name, c]));
    expect(byName.get('createCategory')?.checked).toBe(false);
    expect(byName.get('createCategory')?.note).toContain('no external or money effect found in its code');
    expect(byName.get('updateProfile')?.checked).toBe(false);
    expect(byName.get('placeOrder')?.checked).toBe(true);
    expect(byName.get('placeOrder')?.note).toContain('a record (order) a duplicate would harm');
    expect(byName.get('inviteMember')?.checked).toBe(true);
    expect(byName.get('inviteMember')?.note).toContain('a message to a person');
    expect(byName.get('openPortal')?.checked).toBe(true);
    expect(byName.get('openPortal')?.note).toContain('external or money effect');
    expect(byName.get('signInWithEmail')?.checked).toBe(false);
    expect(byName.get('signInWithEmail')?.note).toContain('sign-in');
    expect(byName.get('updateEmail')?.checked).toBe(false);
    expect(byName.get('createPaymentMethod')?.checked).toBe(false);
    expect(byName.get('orderStatus')?.checked).toBe(false);
  });
});

describe('parseActionText', () => {
  it('reads free-text answers into named actions with their trigger', () => {
    expect(parseActionText('create payment POST /payments; process stripe webhook, sendNotification consumer, nightly invoice job')).toEqual([
      { name: 'createPayment', trigger: 'http', route: 'POST /payments', significantFields: [] },
      { name: 'processStripeWebhook', trigger: 'webhook', significantFields: [], provider: 'stripe' },
      { name: 'sendNotification', trigger: 'consumer', significantFields: [] },
      { name: 'nightlyInvoiceJob', trigger: 'cron', significantFields: [] },
    ]);
  });
});

describe('action names from routes', () => {
  it('keeps a segment that already names its action, and prefixes the method verb only to a resource', () => {
    expect(nameFromRoute('POST', '/api/teams/:slug/payments/create-checkout-session')).toBe('createCheckoutSession');
    expect(nameFromRoute('POST', '/api/teams/[slug]/payments/create-portal-link')).toBe('createPortalLink');
    expect(nameFromRoute('POST', '/api/send_invite')).toBe('sendInvite');
    expect(nameFromRoute('POST', '/orders/:id/cancel')).toBe('cancelOrder');
    expect(nameFromRoute('POST', '/orders')).toBe('createOrder');
    // fastify/demo@1f50cc1: the last segment says what the request does to the task.
    expect(nameFromRoute('POST', '/api/tasks/:id/assign')).toBe('assignTask');
    expect(nameFromRoute('POST', '/api/tasks/:id/upload')).toBe('uploadTask');
    // adyen-examples/adyen-node-online-payments@1ad09b5: a camelCase segment that starts with its verb.
    expect(nameFromRoute('POST', '/handleShopperRedirect')).toBe('handleShopperRedirect');
    expect(nameFromRoute('POST', '/api/paymentMethods')).toBe('createPaymentMethod');
    expect(nameFromRoute('POST', '/api/sendInvite')).toBe('sendInvite');
    // mfts/papermark@7ff2e65: billing routes named by what they do to the billing.
    expect(nameFromRoute('POST', '/api/teams/:teamId/billing/manage')).toBe('manageBilling');
    expect(nameFromRoute('POST', '/api/teams/:teamId/billing/reactivate')).toBe('reactivateBilling');
  });

  it("does not take a generic handler name (defaultHandler, handleRoute) for the action's name", () => {
    const inspection: Inspection = {
      root: '/app',
      stack: STACK,
      warnings: [],
      findings: [
        { kind: 'endpoint', id: 'a', file: 'pages/api/jobs/send-notification.ts', line: 3, method: 'POST', path: '/api/jobs/send-notification', framework: 'nextjs', prefixResolved: true, handler: 'defaultHandler', sendsMessage: ['resend'] },
        { kind: 'endpoint', id: 'b', file: 'pages/api/export.ts', line: 3, method: 'POST', path: '/api/exports', framework: 'nextjs', prefixResolved: true, handler: 'handleRoute', sendsMessage: ['resend'] },
      ],
    };
    expect(actionsFromInspection(inspection).map((c) => c.action.name)).toEqual(['sendNotification', 'createExport']);
  });
});
