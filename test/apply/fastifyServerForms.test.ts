import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { formFixtureSuite } from './fixtureApp.js';

await formFixtureSuite({
  fixture: 'fastify-forms',
  title: 'apply on a Fastify app whose route a server-rendered form posts (@fastify/view + Handlebars)',
  applyTitle: "adds the hidden key field to the form and the key function to @fastify/view's defaultContext, type-checks, and changes nothing the second time",
  schema: 'fastify_forms',
  wrote: (first, app) => {
    // The claim-writes pass adds its own name to the same import.
    expect(app).toContain("import { newIdempotencyKey, idempotencyOf } from './idempotency/index.js';\n");
    expect(app).toContain("app.post('/donations', idempotency.donate, async (request, reply) => {");
    expect(app).toContain('  app.register(view, {\n    engine: { handlebars },\n    root: views,\n    defaultContext: { idempotencyKey: newIdempotencyKey },\n  });\n');
    expect(first.edits.map((e) => e.summary)).toContain("gives the templates idempotencyKey(), a fresh key per rendered form (idempotencyKey: newIdempotencyKey in @fastify/view's defaultContext)");
  },
  serve: async (createApp) => {
    const fastify = (createApp as () => FastifyInstance)();
    const url = await fastify.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => fastify.close() };
  },
});
