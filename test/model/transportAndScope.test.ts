import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import { NOW } from '../helpers/fixtures.js';

/** The TypeGraphQL project of issue #15: two mutations, no authentication (init wrote scope global). */
function config(actions: Array<Record<string, unknown>>) {
  return parseConfig(
    JSON.stringify({
      actions,
      stack: { language: 'typescript', framework: 'unknown', database: 'postgres' },
      concurrency: 'multi-instance',
      retention: '72h',
      detectionLatency: '50ms',
    }),
  );
}

const mutation = { name: 'payOrder', trigger: 'http', route: 'POST /payOrder', transport: 'graphql', significantFields: ['orderId'], provider: 'stripe', source: 'src/resolver.ts:13' };

describe('actions without a route of their own', () => {
  it('are described as what they are: a GraphQL mutation sent to the GraphQL endpoint, its key in that request', () => {
    const action = buildDesign(config([mutation]), undefined, { now: NOW }).actions[0]!;
    expect(action.transport).toBe('graphql');
    expect(action.triggerLabel).toBe('GraphQL mutation');
    expect(action.key.carrier).toContain('Idempotency-Key header of the GraphQL request that carries the mutation');
    expect(action.key.carrier).toContain('GraphQL context');
    // The fingerprint still hashes the configured method and path, as the runtime does (ACTIONS.payOrder).
    expect([action.method, action.path]).toEqual(['POST', '/payOrder']);
  });

  it('say a Server Action takes its key as an argument and a tRPC procedure passes it to the wrapper', () => {
    const model = buildDesign(
      config([
        { name: 'placeOrder', trigger: 'http', route: 'POST /placeOrder', transport: 'server-action', significantFields: ['sku'] },
        { name: 'refund', trigger: 'http', route: 'POST /billing.refund', transport: 'trpc', significantFields: ['orderId'] },
        { name: 'createOrder', trigger: 'http', route: 'POST /orders', significantFields: ['sku'] },
      ]),
      undefined,
      { now: NOW },
    );
    const [action, procedure, route] = model.actions;
    expect(action!.triggerLabel).toBe('Server Action');
    expect(action!.key.carrier).toContain("passed as the Server Action's first argument");
    expect(action!.key.carrier).not.toContain('Idempotency-Key header');
    expect(action!.executes).toContain('The Server Action placeOrder runs');
    expect(procedure!.triggerLabel).toBe('tRPC procedure');
    expect(procedure!.key.carrier).toContain('passed by the procedure to the claim as its key');
    expect(procedure!.executes).toContain('The tRPC procedure billing.refund runs');
    expect(route!.triggerLabel).toBe('HTTP endpoint');
    expect(route).not.toHaveProperty('transport');
    expect(route!.key.carrier).toBe('Idempotency-Key request header (UUIDv4 generated once per user intent)');
  });
});

describe('scope of HTTP actions', () => {
  it('stays per user by default', () => {
    const { transport: _, ...route } = mutation;
    const action = buildDesign(config([route]), undefined, { now: NOW }).actions[0]!;
    expect(action.scope).toBe('user');
    expect(action.scopeReason).toContain('Keys come from authenticated callers');
  });

  it('says why a global scope has no principal and what a leaked key exposes, and the security notes and tests agree', () => {
    const model = buildDesign(config([{ ...mutation, scope: 'global' }]), undefined, { now: NOW });
    const action = model.actions[0]!;
    expect(action.scope).toBe('global');
    expect(action.scopeReason).toContain('there is no authenticated principal to scope them to');
    expect(action.scopeReason).toContain('UUIDv4s (122 random bits)');
    expect(action.scopeReason).toContain('anyone who learns one');
    expect(action.excludedFields.find((f) => f.field === 'Authorization, cookies')?.reason).not.toContain("key's scope");
    const security = new Map(model.security.map((s) => [s.topic, s.decision]));
    expect(security.get('Key scope and enumeration')).toContain('Not for payOrder: its scope is global');
    expect(security.get('Key guessability')).not.toContain('scoped to the caller');
    expect(security.get('Key guessability')).toContain('payOrder is global');
    const other = model.tests.find((t) => t.id === 'other-principal')!;
    expect(other.name).toBe('Key used by another caller');
    expect(model.tests.find((t) => t.id === 'first-request')!.input).toBe('The GraphQL mutation payOrder with a new key');
  });

  it('keeps a configured scope, and a derived global key warns that its fields are the whole secret', () => {
    const tenant = buildDesign(config([{ ...mutation, scope: 'tenant' }]), undefined, { now: NOW }).actions[0]!;
    expect([tenant.scope, tenant.scopeReason]).toEqual(['tenant', 'Configured per tenant.']);
    const derived = buildDesign(config([{ ...mutation, scope: 'global', key: { source: 'derived', from: ['orderId'] } }]), undefined, { now: NOW }).actions[0]!;
    expect(derived.scopeReason).toContain('any caller who sends the same fields reaches the same record');
  });

  it('name a Next.js stack by what its actions are: Server Actions, route handlers, or both', () => {
    const next = (actions: Array<Record<string, unknown>>) => {
      const parsed = config(actions);
      return buildDesign({ ...parsed, stack: { ...parsed.stack, framework: 'nextjs' } }, undefined, { now: NOW }).stack.frameworkLabel;
    };
    const action = { name: 'signUp', trigger: 'http', route: 'POST /signUp', transport: 'server-action', significantFields: ['email'] };
    const route = { name: 'checkout', trigger: 'http', route: 'POST /api/checkout', significantFields: ['priceId'] };
    expect(next([action])).toBe('Next.js Server Actions');
    expect(next([action, route])).toBe('Next.js route handlers and Server Actions');
    expect(next([route])).toBe('Next.js route handlers');
    // The Pages Router's pages/api handlers are API routes (boxyhq/saas-starter-kit).
    const pages = { ...route, name: 'invite', source: 'pages/api/teams/[slug]/invitations.ts:29' };
    expect(next([pages])).toBe('Next.js API routes');
    expect(next([pages, route])).toBe('Next.js route handlers and API routes');
    expect(next([pages, action])).toBe('Next.js API routes and Server Actions');
  });

  it('say how a Server Action key is checked: an argument, not a header', () => {
    const parsed = config([{ name: 'signUp', trigger: 'http', route: 'POST /signUp', transport: 'server-action', significantFields: ['email'] }]);
    const model = buildDesign({ ...parsed, stack: { ...parsed.stack, framework: 'nextjs' } }, undefined, { now: NOW });
    expect(model.keys.validation).toContainEqual(expect.stringContaining('A Server Action (signUp) has no header: its key is its first argument'));
  });
});

describe('a route another system reports events to (nestjs-super@8e6b270)', () => {
  it('is resent by its sender and retried on time-outs, never double-clicked', () => {
    const receiver = { name: 'receiver', trigger: 'http', route: 'POST /payment/receiver', significantFields: ['id'], scope: 'global', key: { source: 'derived', from: ['id'] }, source: 'src/payment.controller.ts:14' };
    const person = { ...receiver, name: 'createOrder', route: 'POST /orders', scope: undefined, key: undefined };
    const [notified, ordered] = buildDesign(config([receiver, person]), undefined, { now: NOW }).actions;
    expect(notified!.retrySources.map((s) => s.id)).toEqual(['webhook-resend', 'client-retry', 'load-balancer-replay', 'network-partition']);
    expect(ordered!.retrySources.map((s) => s.id)).toContain('double-click');
  });
});
