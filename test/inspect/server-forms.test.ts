import { describe, expect, it } from 'vitest';
import { addViewsKeyFunction } from '../../src/apply/viewsKey/express.js';
import { parseSource } from '../../src/apply/sourceFile.js';
import { parseConfig } from '../../src/config/load.js';
import { inspectProject } from '../../src/inspect/index.js';
import { buildDesign } from '../../src/model/buildDesign.js';
import { formHasField, formsInTemplate, hiddenKeyInput } from '../../src/inspect/parse/templateForms.js';
import { samePath } from '../../src/inspect/resolve/serverForms.js';
import { settleActions } from '../../src/questions/settleActions.js';
import { tempProjectSync } from '../helpers/tempProject.js';

const project = (files: Record<string, string>) => tempProjectSync(files, 'ib-server-forms-');

describe('forms in view templates', () => {
  it('reads Pug forms: no action, a literal one, a computed one, attributes over several lines; GET forms are not posts', () => {
    const pug = [
      'block content',
      "  form(method='POST')",
      "    input(type='hidden', name='_csrf', value=_csrf)",
      '',
      "  form(action='/account/' + user.id + '/delete',",
      "       method='post')",
      '    button Delete',
      "  form(action='/search')",
      "    input(name='q')",
      "  form.inline(action=`/orders/${order.id}/refund`, method='POST')",
      '    button Refund',
    ].join('\n');
    const forms = formsInTemplate(pug, 'pug');
    expect(forms.map((f) => [f.line, f.action, f.childIndent])).toEqual([
      [2, undefined, '    '],
      [5, '/account/:param/delete', '    '],
      [10, '/orders/:param/refund', '    '],
    ]);
    expect(hiddenKeyInput('pug', 'idempotencyKey', 'idempotencyKey')).toBe("input(type='hidden', name='idempotencyKey', value=idempotencyKey())");
  });

  it('reads HTML-like forms (EJS, Handlebars, Nunjucks) with template tags in their attributes', () => {
    const ejs = '<form action="/orders/<%= order.id %>/pay" method="POST" class="<%= a > b ? "x" : "y" %>">\n  <input name="amount">\n</form>\n<form method="get" action="/search"></form>\n<form method=post action="https://other.example/x"></form>';
    const forms = formsInTemplate(ejs, 'ejs');
    expect(forms.map((f) => [f.line, f.action])).toEqual([[1, '/orders/:param/pay']]);
    expect(formHasField(ejs, forms[0]!, 'amount')).toBe(true);
    expect(formHasField(ejs, forms[0]!, 'idempotencyKey')).toBe(false);
    expect(formsInTemplate('{{#if user}}\n  <form method="post" action="/teams/{{team.id}}/invite">\n    {{> fields}}\n  </form>\n{{/if}}', 'handlebars').map((f) => [f.line, f.action, f.childIndent])).toEqual([[2, '/teams/:param/invite', '    ']]);
  });

  it("reads the method a form tunnels through POST (method-override's _method field or query)", () => {
    const hbs = '<form action="/stories/{{story._id}}" method="POST">\n  <input type="hidden" name="_method" value="PUT">\n</form>\n<form action=\'/stories/{{_id}}?_method=DELETE\' method=\'POST\'></form>\n<form action="/stories" method="POST"><input name="title"></form>';
    expect(formsInTemplate(hbs, 'handlebars').map((f) => [f.action, f.method])).toEqual([
      ['/stories/:param', 'PUT'],
      ['/stories/:param', 'DELETE'],
      ['/stories', undefined],
    ]);
    expect(formsInTemplate("form(action='/items/' + item.id, method='POST')\n  input(type='hidden', name='_method', value='DELETE')\n", 'pug')[0]?.method).toBe('DELETE');
  });

  it('matches route parameters and computed segments segment by segment', () => {
    expect(samePath('/account/:id/delete', '/account/:param/delete')).toBe(true);
    expect(samePath('/reset/:token', '/reset/abc')).toBe(true);
    expect(samePath('/orders', '/orders/new')).toBe(false);
  });
});

describe('routes a server-rendered form posts', () => {
  const app = [
    "const express = require('express');",
    "const shop = require('./controllers/shop');",
    'const app = express();',
    "app.set('view engine', 'pug');",
    "app.get('/checkout', shop.getCheckout);",
    "app.post('/checkout', shop.postCheckout);",
    "app.post('/contact', shop.postContact);",
    "app.post('/api/orders', shop.postOrder);",
    'module.exports = app;',
  ].join('\n');
  const shop = [
    "const db = require('../db');",
    "exports.getCheckout = (req, res) => { res.render('shop/checkout', { title: 'Pay' }); };",
    'exports.postCheckout = async (req, res) => { await db.orders.insertOne({ sku: req.body.sku }); res.redirect(303, "/done"); };',
    'exports.postContact = async (req, res) => { await db.messages.insertOne({ text: req.body.text }); res.redirect("/"); };',
    'exports.postOrder = async (req, res) => { await db.orders.insertOne({ sku: req.body.sku }); res.status(201).json({}); };',
  ].join('\n');
  const files = {
    'package.json': JSON.stringify({ name: 'shop', dependencies: { express: '^4.21.0', pug: '^3.0.3', mongodb: '^6.0.0' } }),
    'app.js': app,
    'controllers/shop.js': shop,
    'views/shop/checkout.pug': "extends ../layout\nblock content\n  form(method='POST')\n    input(name='sku')\n",
    'views/contact.ejs': '<form method="post" action="/contact"><textarea name="text"></textarea></form>',
  };

  it('links a form without an action to the route whose page renders it, and a form with one to its route', async () => {
    const inspection = await inspectProject(project(files));
    const endpoints = inspection.findings.filter((f) => f.kind === 'endpoint');
    const formsOf = (p: string) => endpoints.find((f) => f.kind === 'endpoint' && f.path === p && f.method === 'POST')?.forms;
    expect(formsOf('/checkout')).toEqual([{ file: 'views/shop/checkout.pug', line: 3 }]);
    expect(formsOf('/contact')).toEqual([{ file: 'views/contact.ejs', line: 1 }]);
    expect(formsOf('/api/orders')).toBeUndefined();
  });

  it('keys the form-posted actions by a hidden field at init and leaves the JSON API on the header', async () => {
    const inspection = await inspectProject(project(files));
    const endpoint = (p: string) => inspection.findings.find((f) => f.kind === 'endpoint' && f.path === p && f.method === 'POST')!;
    const action = (name: string, p: string) => ({ name, trigger: 'http' as const, route: `POST ${p}`, significantFields: ['sku'], source: `${endpoint(p).file}:${endpoint(p).line}` });
    const settled = settleActions([action('postCheckout', '/checkout'), action('postOrder', '/api/orders')], inspection);
    expect(settled.actions.map((a) => a.key)).toEqual([{ source: 'server', field: 'idempotencyKey' }, undefined]);
    expect(settled.formAssumption).toContain('Server-rendered forms post to postCheckout.');
  });
});

describe('the design of a form-posted action', () => {
  const config = (actions: unknown[]) =>
    parseConfig(JSON.stringify({ actions, stack: { language: 'javascript', framework: 'express', database: 'postgres' }, concurrency: 'multi-instance', retention: '24h', detectionLatency: '50ms' }));
  const form = { name: 'donate', trigger: 'http', route: 'POST /donations', significantFields: ['amount'], key: { source: 'server', field: 'idempotencyKey' } };

  it('names the form and its field, and says the server mints the key when forms post every keyed action', () => {
    const model = buildDesign(config([form]), undefined, { now: new Date('2026-01-15T00:00:00Z'), forms: { donate: [{ file: 'views/donate.ejs', line: 4 }] } });
    expect(model.actions[0]!.key.carrier).toBe('hidden idempotencyKey field of the form at views/donate.ejs:4, a UUIDv4 minted per render; the Idempotency-Key header when a script sends one');
    expect(model.keys.generation).toMatch(/^donate is posted by server-rendered forms/);
    expect(model.keys.formGeneration).toBeUndefined();
    expect(model.keys.validation.join('\n')).toContain('a field sent twice is rejected with 400');
  });

  it('keeps the callers paragraph when another action takes its key from the header', () => {
    const model = buildDesign(config([form, { ...form, name: 'refund', route: 'POST /refunds', key: undefined }]), undefined, { now: new Date('2026-01-15T00:00:00Z') });
    expect(model.keys.generation).toMatch(/^Callers generate a UUIDv4/);
    expect(model.keys.formGeneration).toMatch(/^donate is posted by server-rendered forms/);
  });

  it('refuses a key field that is no plain name, or one on a derived key', () => {
    expect(() => config([{ ...form, key: { source: 'server', field: 'a"><script>' } }])).toThrow(/form field name/);
    expect(() => config([{ ...form, key: { source: 'derived', from: ['amount'], field: 'idempotencyKey' } }])).toThrow(/key field only on an HTTP action/);
  });
});

describe("the views' key function in the app", () => {
  const add = (file: string, text: string) => {
    const sf = parseSource(file, text, { quote: 'single', semicolons: text.includes(';') });
    return { outcome: addViewsKeyFunction(sf, 'app', './idempotency/index.js'), text: sf.getFullText() };
  };

  it('goes after the require that binds it in CommonJS, where the app is created before the other requires', () => {
    const { outcome, text } = add('server.js', "const express = require('express')\nconst app = express()\nconst flash = require('express-flash')\n\napp.set('view engine', 'ejs')\napp.post('/register', (req, res) => res.redirect('/login'))\n");
    expect(outcome).toBe('added');
    const lines = text.split('\n');
    const required = lines.findIndex((l) => l.includes("const { newIdempotencyKey } = require('./idempotency/index.js')"));
    const assigned = lines.findIndex((l) => l === 'app.locals.idempotencyKey = newIdempotencyKey');
    expect(required).toBeGreaterThan(1);
    expect(assigned).toBeGreaterThan(required);
    expect(assigned).toBeGreaterThan(lines.indexOf("app.set('view engine', 'ejs')"));
    expect(assigned).toBeLessThan(lines.findIndex((l) => l.startsWith('app.post')));
  });

  it('goes after the view engine inside the function that builds the app (ES modules)', () => {
    const { outcome, text } = add('app.ts', "import express from 'express';\n\nexport function createApp() {\n  const app = express();\n  app.set('view engine', 'pug');\n  return app;\n}\n");
    expect(outcome).toBe('added');
    expect(text).toContain("import { newIdempotencyKey } from './idempotency/index.js';");
    expect(text).toContain("  app.set('view engine', 'pug');\n  app.locals.idempotencyKey = newIdempotencyKey;\n  return app;");
  });

  it('leaves a file that binds the name already, or has no app', () => {
    expect(add('a.ts', "import express from 'express';\nconst newIdempotencyKey = 1;\nconst app = express();\n").outcome).toBe('name-taken');
    expect(add('b.ts', "import express from 'express';\nexport const router = express.Router();\n").outcome).toBe('no-app');
  });
});
