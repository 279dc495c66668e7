import { describe, expect, it } from 'vitest';
import type { Inspection } from '../../src/inspect/types.js';
import { actionsFromInspection } from '../../src/questions/actionsFromInspection.js';
import { settleActions } from '../../src/questions/settleActions.js';
import type { ActionAnswer } from '../../src/questions/types.js';

const STACK: Inspection['stack'] = { language: 'typescript', frameworks: [], databases: ['postgres'], orms: [], brokers: [], testFramework: 'vitest', packageManager: 'npm', payments: ['stripe'] };

/** A TypeGraphQL resolver (payOrder), a tRPC procedure and a Server Action, as the inspector reports them. */
function inspection(authentication: string[] | undefined, packages?: Inspection['stack']['packages']): Inspection {
  return {
    root: '/gq',
    stack: { ...STACK, ...(authentication ? { authentication } : {}), ...(packages ? { packages } : {}) },
    warnings: [],
    findings: [
      { kind: 'endpoint', id: 'a', file: 'src/resolver.ts', line: 13, method: 'POST', path: '/payOrder', framework: 'graphql', prefixResolved: false, handler: 'payOrder', bodyFields: ['orderId'], touchesPayment: true, transport: 'graphql' },
      { kind: 'endpoint', id: 'b', file: 'src/trpc.ts', line: 5, method: 'POST', path: '/billing.refund', framework: 'trpc', prefixResolved: false, handler: 'refund', bodyFields: ['orderId'], transport: 'trpc' },
      { kind: 'endpoint', id: 'c', file: 'src/app/actions.ts', line: 3, method: 'POST', path: '/placeOrder', framework: 'nextjs', prefixResolved: false, handler: 'placeOrder', bodyFields: ['sku'], transport: 'server-action' },
      { kind: 'endpoint', id: 'd', file: 'src/rest.ts', line: 7, method: 'POST', path: '/orders', framework: 'express', prefixResolved: true, handler: 'createOrder', bodyFields: ['sku'] },
    ],
  };
}

const http = (name: string, route: string, extra: Partial<ActionAnswer> = {}): ActionAnswer => ({ name, trigger: 'http', route, significantFields: ['orderId'], ...extra });

describe('actions proposed from GraphQL mutations, tRPC procedures and Server Actions', () => {
  it('carry the transport the inspector found; a declared route carries none', () => {
    const byName = new Map(actionsFromInspection(inspection([])).map((c) => [c.action.name, c.action]));
    expect(byName.get('payOrder')?.transport).toBe('graphql');
    expect(byName.get('refundBilling')?.transport).toBe('trpc');
    expect(byName.get('placeOrder')?.transport).toBe('server-action');
    expect(byName.get('createOrder')).not.toHaveProperty('transport');
  });
});

describe('settleActions', () => {
  it('marks a configured action that inspection found as a GraphQL mutation (same route), and keeps a transport the config sets', () => {
    const { actions } = settleActions([http('payOrder', 'POST /payOrder'), http('refund', 'POST /billing.refund', { transport: 'graphql' }), http('createOrder', 'POST /orders')], inspection(['passport']));
    expect(actions.map((a) => a.transport)).toEqual(['graphql', 'graphql', undefined]);
  });

  it('keys HTTP actions globally when the code was read and nothing authenticates callers, and says why', () => {
    const { actions, assumption } = settleActions([http('payOrder', 'POST /payOrder', { source: 'src/resolver.ts:13' }), { name: 'consumeOrders', trigger: 'consumer', route: 'orders', significantFields: ['id'] }], inspection([]));
    expect(actions[0]!.scope).toBe('global');
    expect(actions[1]).not.toHaveProperty('scope');
    expect(assumption).toContain('Nothing in the code authenticates callers');
    expect(assumption).toContain('payOrder has no principal to scope keys to');
    expect(assumption).toContain('Set "scope": "user" once requests are authenticated');
  });

  it('keeps the per-user default when something authenticates, or when no code was read', () => {
    for (const found of [['passport'], ['src/auth.ts (sets req.user)'], undefined]) {
      const { actions, assumption } = settleActions([http('payOrder', 'POST /payOrder')], inspection(found));
      expect(actions[0]).not.toHaveProperty('scope');
      expect(assumption).toBeUndefined();
    }
  });

  it('never overrides a scope the answer sets', () => {
    const { actions, assumption } = settleActions([http('payOrder', 'POST /payOrder', { scope: 'tenant' })], inspection([]));
    expect(actions[0]!.scope).toBe('tenant');
    expect(assumption).toBeUndefined();
  });

  it("judges a monorepo action by its own package's authentication", () => {
    const pkg = (dir: string, authentication: string[]) => ({ dir, name: dir, stack: { ...STACK, authentication } });
    const { actions } = settleActions(
      [http('charge', 'POST /charges', { source: 'apps/api/src/server.ts:6' }), http('subscribe', 'POST /subscribe', { source: 'apps/web/route.ts:3' })],
      inspection(['next-auth'], [pkg('apps/api', []), pkg('apps/web', ['next-auth'])]),
    );
    expect(actions.map((a) => a.scope)).toEqual(['global', undefined]);
  });

  it('keys a Server Action globally when neither its code nor its builder reads the session, in words of its own', () => {
    const base = inspection(['src/lib/session.ts (verifies a token)']);
    const withAuth: Inspection = {
      ...base,
      routeAuthentication: [
        { file: 'src/app/actions.ts', line: 3, method: 'POST', path: '/placeOrder', by: [] },
        { file: 'src/app/actions.ts', line: 9, method: 'POST', path: '/invite', by: ['getUser() in validatedActionWithUser'] },
      ],
    };
    const { actions, routeAssumptions } = settleActions(
      [http('placeOrder', 'POST /placeOrder', { source: 'src/app/actions.ts:3' }), http('invite', 'POST /invite', { source: 'src/app/actions.ts:9', transport: 'server-action' })],
      withAuth,
    );
    const routeAssumption = routeAssumptions?.join(' ');
    expect(actions.map((a) => a.scope)).toEqual(['global', undefined]);
    expect(routeAssumption).toContain('Nothing in the Server Action placeOrder reads the session');
    expect(routeAssumption).toContain('Next.js serves every Server Action as a public endpoint');
    expect(routeAssumption).not.toContain('middleware');
  });

  it('keys a Next.js route handler globally when nothing it runs reads the session, saying it was the handler that was read', () => {
    const base = inspection(['next-auth']);
    const withAuth: Inspection = {
      ...base,
      routeAuthentication: [
        { file: 'pages/api/auth/resend.ts', line: 8, method: 'POST', path: '/api/auth/resend', by: [] },
        { file: 'app/api/teams/route.ts', line: 3, method: 'POST', path: '/api/teams', by: ['getSession() in POST'] },
      ],
    };
    const { actions, routeAssumptions } = settleActions([http('resendToken', 'POST /api/auth/resend', { source: 'pages/api/auth/resend.ts:8' }), http('createTeam', 'POST /api/teams', { source: 'app/api/teams/route.ts:3' })], withAuth);
    const routeAssumption = routeAssumptions?.join(' ');
    expect(actions.map((a) => a.scope)).toEqual(['global', undefined]);
    expect(routeAssumption).toContain('Nothing in the Next.js route handler of resendToken reads the session');
    expect(routeAssumption).toContain('and no middleware.ts or proxy.ts that could check it runs for it (none exists, or its matcher leaves the route out)');
    expect(routeAssumption).not.toContain('use() and addHook()');
  });

  it('names at most a few actions in one assumption, so the config init writes stays within its length limits', async () => {
    const { configSchema } = await import('../../src/config/schema.js');
    const names = ['createWorkspaceInvitation', 'createProjectFromTemplate', 'createDocumentVersion', 'createBillingPortalSession', 'createCheckoutSessionForTeam', 'createApiKeyForWorkspace', 'createWebhookEndpoint', 'createAuditLogExport'];
    const routes = names.map((name, index) => ({ file: `app/api/r${index}/route.ts`, line: 3, method: 'POST' as const, path: `/api/r${index}`, by: [] }));
    const { routeAssumptions } = settleActions(
      names.map((name, index) => http(name, `POST /api/r${index}`, { source: `app/api/r${index}/route.ts:3` })),
      { ...inspection(['next-auth']), routeAuthentication: routes },
    );
    const routeAssumption = routeAssumptions?.join(' ');
    expect(routeAssumption).toContain('of createWorkspaceInvitation, createProjectFromTemplate and 6 more reads the session');
    const assumptions = configSchema.shape.assumptions;
    expect(assumptions.safeParse(routeAssumptions).success).toBe(true);
  });
});
