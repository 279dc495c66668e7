import type { Express } from 'express';
import { expect } from 'vitest';
import { formFixtureSuite, listening } from './fixtureApp.js';

await formFixtureSuite({
  fixture: 'express-forms',
  title: 'apply on an Express app whose route a server-rendered form posts',
  applyTitle: 'adds the hidden key field to the form and the key function to the app, type-checks, and changes nothing the second time',
  schema: 'forms',
  wrote: (_first, app) => {
    expect(app).toContain("  app.set('view engine', 'hbs');\n  app.locals.idempotencyKey = newIdempotencyKey;\n");
    expect(app).toContain("app.post('/donations', idempotency.donate, async (req, res, next) => {");
  },
  serve: (createApp) => listening((createApp as () => Express)().listen(0, '127.0.0.1')),
});
