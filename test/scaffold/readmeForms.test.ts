import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import { EXPRESS } from '../../src/scaffold/frameworks/express.js';
import { FASTIFY } from '../../src/scaffold/frameworks/fastify.js';
import { HONO } from '../../src/scaffold/frameworks/hono.js';
import { KOA } from '../../src/scaffold/frameworks/koa.js';
import type { HttpFramework } from '../../src/scaffold/httpFramework.js';
import { renderReadme } from '../../src/scaffold/renderReadme.js';
import { buildScaffoldView } from '../../src/scaffold/scaffoldView.js';
import { NOW } from '../helpers/fixtures.js';

/** The README of a design whose one action a server-rendered form posts, for one framework. */
function readme(framework: HttpFramework, id: string): string {
  const donate = { name: 'donate', trigger: 'http', route: 'POST /donations', significantFields: ['amount'], scope: 'global', key: { source: 'server', field: 'idempotencyKey' } };
  const config = parseConfig(JSON.stringify({ actions: [donate], stack: { language: 'typescript', framework: id, database: 'postgres' }, concurrency: 'multi-instance', retention: '24h', detectionLatency: '50ms' }));
  return renderReadme(buildScaffoldView(buildDesign(config, undefined, { now: NOW })), [], framework);
}

describe("README: where a form-posted action's views get the key function, in the app's framework", () => {
  it('shows app.locals for Express, a ctx.state middleware for Koa and defaultContext for Fastify, each as apply writes it', () => {
    expect(readme(EXPRESS, 'express')).toContain("(`idempotency-builder apply` does both):\n\n```ts\nimport { newIdempotencyKey } from './idempotency/index.js';\n\napp.locals.idempotencyKey = newIdempotencyKey;");
    expect(readme(KOA, 'koa')).toContain('app.use((ctx, next) => {\n  ctx.state.idempotencyKey = newIdempotencyKey;\n  return next();\n});');
    expect(readme(FASTIFY, 'fastify')).toContain('defaultContext: { idempotencyKey: newIdempotencyKey }');
    for (const [framework, id] of [[KOA, 'koa'], [FASTIFY, 'fastify']] as const) expect(readme(framework, id)).not.toContain('app.locals');
  });

  it('tells a Hono app to mint the key in the component, which apply leaves alone', () => {
    const text = readme(HONO, 'hono');
    expect(text).toContain('<input type="hidden" name="idempotencyKey" value={newIdempotencyKey()} />');
    expect(text).toContain('leaves JSX and\nhtml`` views to you');
    expect(text).not.toContain('does both');
  });
});
