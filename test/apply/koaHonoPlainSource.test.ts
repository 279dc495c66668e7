import { describe, expect, it } from 'vitest';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';

const options = (framework: WireSourceOptions['framework']): WireSourceOptions => ({
  framework,
  scaffoldDir: 'src/idempotency',
  imports: { aliases: [], defaultExtension: '.js' },
  scaffoldModules: new Set(['index']),
});
const target = (file: string, line: number, extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: 'createPayment', codeName: 'createPayment', trigger: 'http', method: 'POST', path: '/payments', file, line, scope: 'user', keySource: 'client', ...extra });

function expectIdempotent(file: string, text: string, targets: WiringTarget[], opts: WireSourceOptions): void {
  const again = wireSource(file, text, targets, { ...opts, anyLine: true });
  expect(again.text).toBe(text);
  expect(again.edits).toEqual([]);
}

describe('Koa routes', () => {
  const file = 'src/routes/payments.ts';

  it('says when nothing authenticates the route (as the inspection read it) and the keys are scoped per caller; not when something does', () => {
    const text = "import Router from '@koa/router';\n\nexport const router = new Router();\n\nrouter.post('/payments', async (ctx) => {\n  ctx.status = 201;\n});\n";
    const read = (by: string[]) => ({ ...options('koa'), routeAuthentication: () => ({ file, line: 5, method: 'POST' as const, path: '/payments', by }) });
    const none = wireSource(file, text, [target(file, 5)], read([]));
    expect(none.text).toContain("router.post('/payments', idempotency.createPayment, async (ctx) => {");
    expect(none.manual.map((m) => m.reason)).toContainEqual(expect.stringMatching(/^the route has no authentication before the handler \(nor on its router before it, nor where the router is mounted\), but the action's keys are scoped per user/));
    const guarded = wireSource(file, text, [target(file, 5)], read(["jwt({ secret })"]));
    expect(guarded.manual.map((m) => m.reason)).not.toContainEqual(expect.stringContaining('has no authentication'));
    expect(guarded.manual.map((m) => m.reason)).toContainEqual(expect.stringContaining("the handler does not read the caller's id"));
    expect(wireSource(file, text, [target(file, 5, { scope: 'global' })], read([])).manual.map((m) => m.reason)).not.toContainEqual(expect.stringContaining('has no authentication'));
  });
  const source = `import Router from '@koa/router';
import { requireUser } from '../auth.js';

export const router = new Router();

router.post('/payments', requireUser, async (ctx) => {
  ctx.status = 201;
  ctx.body = { payer: ctx.state.user.id, amount: ctx.request.body.userId };
});
`;

  it('puts the middleware right before the handler and reads the principal from ctx.state, never the body', () => {
    const out = wireSource(file, source, [target(file, 6)], options('koa'));
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { idempotency } from '../idempotency/instance.js';\n");
    expect(out.text).toContain("router.post('/payments', requireUser, idempotency.createPayment, async (ctx) => {");
    expect(out.principal).toEqual(['state', 'user', 'id']);
    expectIdempotent(file, out.text, [target(file, 6)], options('koa'));
  });

  it('says what the instance assumes when the handler does not read the caller', () => {
    const text = source.replace('payer: ctx.state.user.id, ', '');
    const out = wireSource(file, text, [target(file, 6)], options('koa'));
    expect(out.principal).toBeUndefined();
    expect(out.manual.map((m) => m.reason)).toContainEqual(expect.stringContaining('ctx.state.user?.id'));
  });

  it("finds a named @koa/router route by its path, the second argument", () => {
    const text = source.replace("router.post('/payments',", "router.post('create-payment', '/payments',");
    const out = wireSource(file, text, [target(file, 6)], options('koa'));
    expect(out.text).toContain("router.post('create-payment', '/payments', requireUser, idempotency.createPayment, async (ctx) => {");
    expectIdempotent(file, out.text, [target(file, 6)], options('koa'));
  });

  it('refuses when the recorded line no longer holds the route', () => {
    const out = wireSource(file, `// moved\n${source}`, [target(file, 6)], options('koa'));
    expect(out.stale).toEqual([`${file} changed since inspection: POST /payments is registered at line 7, not 6`]);
    expect(out.edits).toEqual([]);
  });
});

describe('Hono routes', () => {
  const file = 'src/app.ts';
  const source = `import { Hono } from 'hono'

const app = new Hono()

app.post('/payments', async (c) => {
  const payer = c.get('user')?.id
  return c.json({ payer }, 201)
})

export default app
`;

  it('follows a semicolon-less file and reads the principal from the context variables', () => {
    const out = wireSource(file, source, [target(file, 5)], options('hono'));
    expect(out.text).toContain("import { idempotency } from './idempotency/instance.js'\n");
    expect(out.text).toContain("app.post('/payments', idempotency.createPayment, async (c) => {");
    expect(out.principal).toEqual(['var', 'user', 'id']);
    expectIdempotent(file, out.text, [target(file, 5)], options('hono'));
  });

  it('never takes c.env or the body for the caller', () => {
    const text = source.replace("c.get('user')?.id", 'c.env.tenantId');
    expect(wireSource(file, text, [target(file, 5)], options('hono')).principal).toBeUndefined();
  });

  // The route pass alone (one file): planApply's project pass (openApiRoutes.ts) then edits the config and drops this step.
  it('leaves a @hono/zod-openapi .openapi(route, handler) registration to the project pass, saying where the middleware goes, never "changed since inspection"', () => {
    const routerFile = 'src/routes/payments.index.ts';
    const text = `import { OpenAPIHono } from '@hono/zod-openapi';
import * as handlers from './payments.handlers';
import * as routes from './payments.routes';

export const payments = new OpenAPIHono()
  .openapi(routes.list, handlers.list)
  .openapi(routes.create, handlers.create);
`;
    const out = wireSource(routerFile, text, [target(routerFile, 7)], options('hono'));
    expect(out.stale).toEqual([]);
    expect(out.text).toBe(text);
    expect(out.manual.map((m) => [m.line, m.reason])).toContainEqual([
      7,
      "POST /payments is registered with @hono/zod-openapi's .openapi(…) at line 7, which takes no middleware argument; add `middleware: [idempotency.createPayment]` to its createRoute config (routes.create) by hand",
    ]);
  });
});

describe('plain functions', () => {
  const file = 'src/billing.ts';
  const derived = { action: 'chargeInvoice', codeName: 'chargeInvoice', path: '/invoices', scope: 'global', keySource: 'derived' } as const;
  const source = `import { db } from './db.js';

export async function chargeInvoice(invoice: { id: string; cents: number }) {
  const note = \`charge
for \${invoice.id}\`;
  await db.query('UPDATE invoices SET paid = true, note = $2 WHERE id = $1', [invoice.id, note]);
  return { id: invoice.id, paid: true };
}
`;

  it('wraps the body, leaving a multi-line template literal as it was', () => {
    const out = wireSource(file, source, [target(file, 3, derived)], options('plain'));
    expect(out.manual).toEqual([]);
    expect(out.text).toBe(`import { db } from './db.js';
import { idempotency } from './idempotency/instance.js';

export async function chargeInvoice(invoice: { id: string; cents: number }) {
  return idempotency.chargeInvoice({ fingerprintInput: invoice }, async () => {
    const note = \`charge
for \${invoice.id}\`;
    await db.query('UPDATE invoices SET paid = true, note = $2 WHERE id = $1', [invoice.id, note]);
    return { id: invoice.id, paid: true };
  });
}
`);
    expectIdempotent(file, out.text, [target(file, 3, derived)], options('plain'));
  });

  it("wraps a tRPC procedure's expression body, keyed by its input", () => {
    const text = `export const router = t.router({\n  chargeInvoice: t.procedure.mutation(async ({ input, ctx }) => ({ id: (await ctx.billing.charge(input.id)).id })),\n});\n`;
    const out = wireSource(file, text, [target(file, 2, derived)], options('plain'));
    expect(out.manual).toEqual([]);
    expect(out.text).toContain('mutation(async ({ input, ctx }) => idempotency.chargeInvoice({ fingerprintInput: input }, async () => ({ id: (await ctx.billing.charge(input.id)).id })))');
    expectIdempotent(file, out.text, [target(file, 2, derived)], options('plain'));
    // Returning what a call returns: apply cannot see that it is JSON, so it is the user's call.
    const opaque = text.replace('({ id: (await ctx.billing.charge(input.id)).id })', 'ctx.billing.charge(input.id)');
    expect(wireSource(file, opaque, [target(file, 2, derived)], options('plain')).manual.map((m) => m.reason)).toEqual([expect.stringContaining('not visibly JSON')]);
  });

  it('leaves a manual step with the reason whenever wrapping would change more than idempotency', () => {
    const reason = (text: string, extra: Partial<WiringTarget> = {}) => {
      const out = wireSource(file, text, [target(file, 3, { ...derived, ...extra })], options('plain'));
      expect(out.text).toBe(text);
      return out.manual.map((m) => m.reason).join('\n');
    };
    expect(reason(source, { keySource: 'client' })).toContain("apply cannot tell where the caller's key is");
    expect(reason(source, { scope: 'account' })).toContain('scoped per account');
    expect(reason(source.replace('export async function', 'export function'))).toContain('it is not async');
    expect(reason(source.replace('{ id: invoice.id, paid: true }', '{ id: invoice.id, at: new Date() }'))).toContain('not visibly JSON');
    expect(reason(source.replace('cents: number })', 'cents: number }): Promise<Date>'))).toContain('not visibly JSON');
  });

  it('refuses when no function starts on the recorded line', () => {
    const out = wireSource(file, source, [target(file, 4, derived)], options('plain'));
    expect(out.stale).toEqual([`${file} changed since inspection: no function of chargeInvoice starts at line 4`]);
  });
});

describe('tRPC procedures in an app served by Hono (or Express)', () => {
  it('are a manual step saying where to claim, never a "changed since inspection" that stops the whole apply', () => {
    const file = 'src/trpc/profile.ts';
    const text = "export const profileRouter = router({\n  submitSupportTicket: authenticatedProcedure\n    .input(schema)\n    .mutation(async ({ input }) => send(input)),\n});\n";
    for (const framework of ['hono', 'express'] as const) {
      const wired = wireSource(file, text, [target(file, 2, { action: 'submitSupportTicket', codeName: 'submitSupportTicket', path: '/profile.submitSupportTicket', transport: 'trpc' })], options(framework));
      expect(wired.stale).toEqual([]);
      expect(wired.text).toBe(text);
      expect(wired.manual.map((m) => m.reason)).toEqual([expect.stringMatching(new RegExp(`^a tRPC procedure has no route of its own for the ${framework} middleware: claim inside it with idempotency\\.core\\.runOnce\\(ACTIONS\\.submitSupportTicket`))]);
    }
  });
});
