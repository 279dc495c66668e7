import { describe, expect, it } from 'vitest';
import { importStyleFor } from '../../src/apply/importStyle.js';
import { formsByHand } from '../../src/apply/serverForms.js';
import { parseSource } from '../../src/apply/sourceFile.js';
import { VIEWS_KEY, type ViewsKeyResult, type ViewsSource } from '../../src/apply/viewsKey/index.js';

const source = (file: string, text: string): ViewsSource => ({
  file,
  text,
  parse: () => {
    const style = importStyleFor(file, text, 'src/idempotency', { aliases: [], defaultExtension: '.js' });
    return { sf: parseSource(file, text, style), specifier: style.specifier('index') };
  },
});

/** One framework's pass over inline files, the way apply runs it on the files that mention the framework. */
const wire = (framework: 'express' | 'koa' | 'fastify', files: Record<string, string>): ViewsKeyResult => {
  const wiring = VIEWS_KEY[framework]!;
  return wiring.wire(Object.entries(files).filter(([, text]) => wiring.mentions.test(text)).map(([file, text]) => source(file, text)));
};

/** The pass run again on what it wrote: nothing more to do. */
const expectSettled = (framework: 'express' | 'koa' | 'fastify', files: Record<string, string>, first: ViewsKeyResult) => {
  const after = { ...files, ...Object.fromEntries(first.changed.map((c) => [c.file, c.text])) };
  expect(wire(framework, after)).toEqual({ changed: [], manual: [] });
};

describe('Koa: a first middleware puts the key function in ctx.state, which koa-views and koa-ejs merge into every template', () => {
  it('goes right after `new Koa()`, before the views and the routers (ES modules), and a second run changes nothing', () => {
    const files = {
      'src/app.ts': `import Koa from 'koa';
import views from '@ladjs/koa-views';
import { ordersRouter } from './routes/orders.js';

export function createApp() {
  const app = new Koa();
  app.use(views(new URL('../views', import.meta.url).pathname, { extension: 'ejs' }));
  app.use(ordersRouter.routes());
  return app;
}
`,
    };
    const out = wire('koa', files);
    expect(out.manual).toEqual([]);
    expect(out.changed.map((c) => c.file)).toEqual(['src/app.ts']);
    const text = out.changed[0]!.text;
    expect(text).toContain("import { ordersRouter } from './routes/orders.js';\nimport { newIdempotencyKey } from './idempotency/index.js';\n");
    expect(text).toContain('  const app = new Koa();\n  app.use((ctx, next) => {\n    ctx.state.idempotencyKey = newIdempotencyKey;\n    return next();\n  });\n  app.use(views(');
    expect(out.changed[0]!.summary).toContain('ctx.state.idempotencyKey = newIdempotencyKey');
    expectSettled('koa', files, out);
  });

  it('goes after the require that binds the function in CommonJS, where the app is created before the other requires', () => {
    const files = {
      'server.js': "const Koa = require('koa');\nconst app = new Koa();\nconst render = require('koa-ejs');\n\nrender(app, { root: 'views', layout: false });\napp.use(router.routes());\n",
    };
    const out = wire('koa', files);
    const lines = out.changed[0]!.text.split('\n');
    const required = lines.indexOf("const { newIdempotencyKey } = require('./src/idempotency/index.js');");
    const used = lines.indexOf('app.use((ctx, next) => {');
    expect(required).toBeGreaterThan(lines.indexOf("const render = require('koa-ejs');"));
    expect(used).toBeGreaterThan(required);
    expect(used).toBeLessThan(lines.indexOf('app.use(router.routes());'));
    expectSettled('koa', files, out);
  });

  it("follows a semicolon-less file's style", () => {
    const files = { 'src/app.ts': "import Koa from 'koa'\nimport views from 'koa-views'\n\nexport const app = new Koa()\napp.use(views('views'))\n" };
    const out = wire('koa', files);
    expect(out.changed[0]!.text).toBe("import Koa from 'koa'\nimport views from 'koa-views'\nimport { newIdempotencyKey } from './idempotency/index.js'\n\nexport const app = new Koa()\napp.use((ctx, next) => {\n  ctx.state.idempotencyKey = newIdempotencyKey\n  return next()\n})\napp.use(views('views'))\n");
    expectSettled('koa', files, out);
  });

  it('prefers the file that sets up views when several create an app', () => {
    const files = {
      'src/admin.ts': "import Koa from 'koa';\nexport const admin = new Koa();\n",
      'src/site.ts': "import Koa from 'koa';\nimport views from 'koa-views';\nexport const site = new Koa({ proxy: true });\nsite.use(views('views'));\n",
    };
    const out = wire('koa', files);
    expect(out.changed.map((c) => c.file)).toEqual(['src/site.ts']);
    expect(out.changed[0]!.text).toContain('export const site = new Koa({ proxy: true });\nsite.use((ctx, next) => {');
  });

  it('leaves views that already get the function, and says what to add when no app or the name is taken', () => {
    expect(wire('koa', { 'src/app.ts': "import Koa from 'koa';\nconst app = new Koa();\napp.use(async (ctx, next) => {\n  ctx.state.idempotencyKey = mint;\n  await next();\n});\n" })).toEqual({ changed: [], manual: [] });
    const none = wire('koa', { 'src/routes.ts': "import Router from '@koa/router';\nimport type Koa from 'koa';\nexport const router = new Router();\n" });
    expect(none.changed).toEqual([]);
    expect(none.manual.map((m) => m.reason)).toEqual([expect.stringContaining('no Koa app (`new Koa()`) found')]);
    expect(none.manual[0]!.reason).toContain('app.use((ctx, next) => { ctx.state.idempotencyKey = newIdempotencyKey; return next(); });');
    const taken = wire('koa', { 'src/app.ts': "import Koa from 'koa';\nimport { newIdempotencyKey } from './keys.js';\nconst app = new Koa();\n" });
    expect(taken.changed).toEqual([]);
    expect(taken.manual).toEqual([{ file: 'src/app.ts', reason: expect.stringContaining('already binds "newIdempotencyKey"') }]);
  });
});

describe("Fastify: @fastify/view's defaultContext gets the key function", () => {
  const app = (options: string) => `import Fastify from 'fastify';
import view from '@fastify/view';
import handlebars from 'handlebars';

export function buildApp() {
  const app = Fastify();
  app.register(view, ${options});
  return app;
}
`;

  it('creates defaultContext in a multi-line options literal (ES modules), and a second run changes nothing', () => {
    const files = { 'src/app.ts': app("{\n    engine: { handlebars },\n    root: 'views',\n  }") };
    const out = wire('fastify', files);
    expect(out.manual).toEqual([]);
    const text = out.changed[0]!.text;
    expect(text).toContain("import handlebars from 'handlebars';\nimport { newIdempotencyKey } from './idempotency/index.js';\n");
    expect(text).toContain("  app.register(view, {\n    engine: { handlebars },\n    root: 'views',\n    defaultContext: { idempotencyKey: newIdempotencyKey },\n  });");
    expectSettled('fastify', files, out);
  });

  it('adds the function to a defaultContext written in place, on one line', () => {
    const files = { 'src/app.ts': app("{ engine: { handlebars }, defaultContext: { siteName: 'Shop' } }") };
    const out = wire('fastify', files);
    expect(out.changed[0]!.text).toContain("app.register(view, { engine: { handlebars }, defaultContext: { siteName: 'Shop', idempotencyKey: newIdempotencyKey } });");
    expectSettled('fastify', files, out);
  });

  it('requires the function before a registration that comes ahead of the other requires (CommonJS)', () => {
    const files = {
      'app.js': "const fastify = require('fastify')({ logger: false })\n\nfastify.register(require('@fastify/view'), { engine: { ejs: require('ejs') } })\nconst routes = require('./routes')\nfastify.register(routes)\n",
    };
    const out = wire('fastify', files);
    const lines = out.changed[0]!.text.split('\n');
    // Without an extension, as the file's own relative require spells it.
    const required = lines.indexOf("const { newIdempotencyKey } = require('./src/idempotency/index');");
    expect(required).toBeGreaterThan(0);
    expect(required).toBeLessThan(lines.findIndex((l) => l.startsWith("fastify.register(require('@fastify/view')")));
    expect(out.changed[0]!.text).toContain("fastify.register(require('@fastify/view'), { engine: { ejs: require('ejs') }, defaultContext: { idempotencyKey: newIdempotencyKey } })\n");
    expectSettled('fastify', files, out);
  });

  it('wires point-of-view, the plugin\'s former name, required by name', () => {
    const files = { 'server.js': "const pointOfView = require('point-of-view');\nconst app = require('fastify')();\napp.register(pointOfView, { engine: { pug: require('pug') } });\n" };
    const out = wire('fastify', files);
    expect(out.changed[0]!.text).toContain("app.register(pointOfView, { engine: { pug: require('pug') }, defaultContext: { idempotencyKey: newIdempotencyKey } });");
  });

  it('leaves a defaultContext that has the function, and says exactly what to add where the options are no literal', () => {
    expect(wire('fastify', { 'src/app.ts': app('{ engine: { handlebars }, defaultContext: { idempotencyKey: mint } }') })).toEqual({ changed: [], manual: [] });
    const named = wire('fastify', { 'src/app.ts': app('viewOptions') });
    expect(named.changed).toEqual([]);
    expect(named.manual).toEqual([{ file: 'src/app.ts', line: 7, reason: expect.stringContaining('add `defaultContext: { idempotencyKey: newIdempotencyKey }` to them') }]);
    const shared = wire('fastify', { 'src/app.ts': app('{ engine: { handlebars }, defaultContext: shared }') });
    expect(shared.manual.map((m) => m.reason)).toEqual([expect.stringContaining('no object literal apply can extend: add `idempotencyKey: newIdempotencyKey` to it')]);
    const spread = wire('fastify', { 'src/app.ts': app('{ ...viewDefaults, engine: { handlebars } }') });
    expect(spread.changed).toEqual([]);
    expect(spread.manual.map((m) => m.reason)).toEqual([expect.stringContaining('spread another object')]);
    const none = wire('fastify', { 'src/app.ts': "import Fastify from 'fastify';\nexport const app = Fastify();\n" });
    expect(none.manual.map((m) => m.reason)).toEqual([expect.stringContaining('no @fastify/view registration')]);
  });
});

describe('Express keeps app.locals', () => {
  it('finds the app when express is imported with named imports too, and a second run changes nothing', () => {
    const files = { 'src/app.ts': "import express, { Router } from 'express';\n\nexport const router = Router();\nexport const app = express();\napp.set('view engine', 'ejs');\n" };
    const out = wire('express', files);
    expect(out.changed[0]!.text).toContain("app.set('view engine', 'ejs');\napp.locals.idempotencyKey = newIdempotencyKey;\n");
    expectSettled('express', files, out);
  });
});

describe('frameworks whose views apply does not edit', () => {
  const target = { action: 'donate', codeName: 'donate', trigger: 'http' as const, method: 'POST', path: '/donations', file: 'src/app.tsx', line: 12, keyField: 'idempotencyKey' };

  it("tells a Hono app to mint the key in the JSX or html`` that renders the form", () => {
    const step = formsByHand('hono', target);
    expect(step).toMatchObject({ action: 'donate', file: 'src/app.tsx', line: 12 });
    expect(step.reason).toContain('<input type="hidden" name="idempotencyKey" value={newIdempotencyKey()} />');
    expect(step.reason).toContain('value="${newIdempotencyKey()}"');
    expect(step.reason).toContain('posting POST /donations');
  });

  it('names the frameworks apply does wire for the others', () => {
    expect(formsByHand('nestjs', target).reason).toContain('for Express, Koa and Fastify views only');
  });
});
