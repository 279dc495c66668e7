import { describe, expect, it } from 'vitest';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';

const options: WireSourceOptions = { framework: 'fastify', scaffoldDir: 'src/idempotency', imports: { aliases: [], defaultExtension: '.js' }, scaffoldModules: new Set(['index']) };
const target = (line: number, extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: 'createBooking', codeName: 'createBooking', trigger: 'http', method: 'POST', path: '/bookings', file: 'src/routes/bookings.ts', line, ...extra });

const source = (receiver: string) => `import type { FastifyInstance } from 'fastify';

export async function bookingRoutes(${receiver}: FastifyInstance): Promise<void> {
  ${receiver}.route({
    method: 'POST',
    url: '/bookings',
    handler: async (request, reply) => {
      return reply.code(201).send({ ok: true });
    },
  });
  ${receiver}.route({ method: 'GET', url: '/bookings', handler: async () => [] });
}
`;

describe('Fastify full declaration: app.route({ method, url, handler })', () => {
  for (const receiver of ['app', 'fastify']) {
    it(`spreads the generated hooks first into ${receiver}.route() options, and a second run changes nothing`, () => {
      const out = wireSource('src/routes/bookings.ts', source(receiver), [target(4)], options);
      expect(out.stale).toEqual([]);
      expect(out.text).toContain("import { idempotency } from '../idempotency/instance.js';\n");
      expect(out.text).toContain(`  ${receiver}.route({\n    ...idempotency.createBooking,\n    method: 'POST',`);
      // The GET route of the same path is not touched.
      expect(out.text).toContain(`${receiver}.route({ method: 'GET', url: '/bookings', handler: async () => [] });`);
      expect(out.edits.map((e) => e.summary)).toEqual(['adds the idempotency.createBooking hooks to the .route() options of POST /bookings']);
      const again = wireSource('src/routes/bookings.ts', out.text, [target(4)], { ...options, anyLine: true });
      expect(again.text).toBe(out.text);
      expect(again.edits).toEqual([]);
    });
  }

  it('matches a method array and a one-line options object', () => {
    const text = "import type { FastifyInstance } from 'fastify';\nexport function r(app: FastifyInstance) {\n  app.route({ method: ['POST', 'PUT'], url: '/bookings', handler: async () => ({}) });\n}\n";
    const out = wireSource('src/routes/bookings.ts', text, [target(3)], options);
    expect(out.text).toContain("app.route({ ...idempotency.createBooking, method: ['POST', 'PUT'], url: '/bookings', handler: async () => ({}) });");
  });

  it('leaves a route whose own preHandler is a name (which may hold an array) as a manual step', () => {
    const text = "import type { FastifyInstance } from 'fastify';\nexport function r(app: FastifyInstance, auth: () => void) {\n  app.route({ method: 'POST', url: '/bookings', preHandler: auth, handler: async () => ({}) });\n}\n";
    const out = wireSource('src/routes/bookings.ts', text, [target(3)], options);
    expect(out.text).toBe(text);
    expect(out.manual[0]?.reason).toContain('the route sets its own preHandler as an expression apply cannot extend safely');
  });

  it('puts the generated hooks after the route\'s own array of preHandlers (authentication first), and a second run changes nothing', () => {
    // The shape of stripe/stripe-commercetools-connect-app@1c61c00: every route authenticates in its preHandler.
    const text = `import type { FastifyInstance } from 'fastify';
export function r(app: FastifyInstance, opts: { auth: { authenticate(): () => Promise<void> } }) {
  app.post<{ Body: { amount: number } }>(
    '/bookings',
    {
      preHandler: [opts.auth.authenticate()],
      schema: {},
    },
    async (request, reply) => reply.send({ ok: true }),
  );
  app.route({ method: 'POST', url: '/holds', preHandler: async () => undefined, onSend: [async (_q, _r, p) => p], handler: async () => ({}) });
}
`;
    const hold = (line: number): WiringTarget => ({ ...target(line), action: 'createHold', codeName: 'createHold', path: '/holds' });
    const out = wireSource('src/routes/bookings.ts', text, [target(3), hold(11)], options);
    expect(out.text).toContain('      preHandler: [opts.auth.authenticate(), idempotency.createBooking.preHandler],\n      schema: {},\n      onSend: idempotency.createBooking.onSend,\n');
    expect(out.text).toContain('preHandler: [async () => undefined, idempotency.createHold.preHandler], onSend: [async (_q, _r, p) => p, idempotency.createHold.onSend]');
    expect(out.manual.filter((m) => !/Idempotency-Key header/.test(m.reason))).toEqual([]);
    const again = wireSource('src/routes/bookings.ts', out.text, [target(3), hold(11)], { ...options, anyLine: true });
    expect(again.text).toBe(out.text);
    expect(again.edits).toEqual([]);
  });

  it('refuses when the route moved since inspection', () => {
    const out = wireSource('src/routes/bookings.ts', `// moved\n${source('app')}`, [target(4)], options);
    expect(out.stale).toEqual(['src/routes/bookings.ts changed since inspection: POST /bookings is declared with .route() at line 5, not 4']);
  });
});

describe('Fastify: a route nothing authenticates whose keys are scoped per caller', () => {
  const read = (by: string[]): WireSourceOptions => ({ ...options, routeAuthentication: () => ({ file: 'src/routes/bookings.ts', line: 4, method: 'POST', path: '/bookings', by }) });
  const steps = (opts: WireSourceOptions, extra: Partial<WiringTarget> = {}) => wireSource('src/routes/bookings.ts', source('fastify'), [target(4, { scope: 'user', ...extra })], opts).manual.map((m) => m.reason);

  it('gets the step (no onRequest/preHandler hook on it, its plugin or where the plugin is registered), else none', () => {
    expect(steps(read([]))).toContainEqual(expect.stringMatching(/^the route has no authentication before the handler .*authenticate the route first \(an onRequest hook such as fastify\.authenticate/));
    expect(steps(read(['fastify.authenticate']))).toEqual([]);
    expect(steps(read([]), { scope: 'global' })).toEqual([]);
    // Without the inspection's reading (one file alone) apply does not guess.
    expect(steps(options)).toEqual([]);
  });
});
