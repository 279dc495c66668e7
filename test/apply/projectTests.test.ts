import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ts } from 'ts-morph';
import typescript from 'typescript';
import { keyTestRequests, reachesRoute, requestPath, type KeyedRoute } from '../../src/apply/projectTests.js';

const ROUTES: KeyedRoute[] = [
  { action: 'createOrder', method: 'POST', path: '/orders' },
  { action: 'refundOrder', method: 'POST', path: '/orders/:id/refund' },
];
const single = { quote: 'single', semicolons: true } as const;
const key = (file: string, text: string, routes = ROUTES) => keyTestRequests(file, text, routes, 'Idempotency-Key', single);

const pathOf = (source: string) => {
  const sf = ts.createSourceFile('x.ts', `(${source})`, ts.ScriptTarget.Latest, true);
  const statement = sf.statements[0] as ts.ExpressionStatement;
  return requestPath(statement.expression);
};

describe('request paths and routes', () => {
  it('reads literal, template, concatenated and absolute paths, query strings dropped', () => {
    expect(pathOf("'/orders?x=1'")).toEqual(['orders']);
    expect(pathOf('`/orders/${id}/refund`')).toEqual(['orders', null, 'refund']);
    expect(pathOf("'/orders/' + id + '/refund'")).toEqual(['orders', null, 'refund']);
    expect(pathOf('`${baseUrl}/orders`')).toEqual(['orders']);
    expect(pathOf("'http://localhost:3000/api/orders'")).toEqual(['api', 'orders']);
    expect(pathOf('url')).toBeUndefined();
  });

  it('matches from the end, parameters and computed segments on either side, one literal at least', () => {
    expect(reachesRoute(['orders'], '/orders')).toBe(true);
    expect(reachesRoute(['api', 'orders'], '/orders')).toBe(true);
    expect(reachesRoute(['orders'], '/api/orders')).toBe(true);
    expect(reachesRoute(['orders', null, 'refund'], '/orders/:id/refund')).toBe(true);
    expect(reachesRoute(['orders', '42', 'refund'], '/orders/{id}/refund')).toBe(true);
    expect(reachesRoute(['users'], '/orders')).toBe(false);
    expect(reachesRoute([null], '/orders/:id')).toBe(false);
  });
});

describe('keyTestRequests', () => {
  it('adds a fresh key to supertest requests to protected routes, on their own line when the chain is laid out so', () => {
    const text = `import request from 'supertest';
import { app } from '../src/app';

it('creates', async () => {
  const res = await request(app)
    .post('/orders')
    .send({ amount: 1 })
    .expect(201);
  await request(app).post(\`/orders/\${res.body.id}/refund\`).send({}).expect(200);
  await request(app).get('/orders').expect(200);
  await request(app).post('/users').send({}).expect(201);
});
`;
    const out = key('test/orders.test.ts', text);
    expect(out.text).toContain(`import { randomUUID } from 'crypto';`);
    expect(out.text).toContain(`    .post('/orders')\n    .set('Idempotency-Key', randomUUID())\n    .send({ amount: 1 })`);
    expect(out.text).toContain(".post(`/orders/${res.body.id}/refund`).set('Idempotency-Key', randomUUID()).send({})");
    expect(out.text).toContain("request(app).get('/orders').expect(200)");
    expect(out.text).toContain("request(app).post('/users').send({})");
    expect(out.edits).toHaveLength(1);
    expect(out.edits[0]!.summary).toContain('2 requests');
    // Applying again changes nothing.
    expect(key('test/orders.test.ts', out.text).text).toBe(out.text);
  });

  it('follows agents and CommonJS requires, and uses node:crypto where the file spells node: imports', () => {
    const text = `const supertest = require('supertest');
const assert = require('node:assert');
const app = require('../app');
let api;
beforeAll(() => { api = supertest.agent(app); });
test('x', async () => { await api.post('/api/orders').send({}); });
`;
    const out = key('test/orders.spec.js', text);
    expect(out.text).toContain("const { randomUUID } = require('node:crypto');");
    expect(out.text).toContain("api.post('/api/orders').set('Idempotency-Key', randomUUID()).send({})");
  });

  it('leaves requests that already send the header, and non-supertest clients chained the same way', () => {
    const text = `import request from 'supertest';
import axios from 'axios';
it('x', async () => {
  await request(app).post('/orders').set('idempotency-key', 'k1').send({});
  await request(app).post('/orders').set({ 'Idempotency-Key': 'k2' });
  await axios.post('/orders', {});
});
`;
    expect(key('test/a.test.ts', text).text).toBe(text);
  });

  it('puts the key into inject(), app.request() and fetch() options: added, merged or spread', () => {
    const text = `import { randomUUID } from 'node:crypto';
it('x', async () => {
  await app.inject({ method: 'POST', url: '/orders', payload: {} });
  await app.inject({
    method: 'POST',
    url: '/orders',
    headers: { authorization: 'Bearer t' },
  });
  await app.request('/orders', { method: 'POST', headers });
  await fetch(\`\${base}/orders\`, { method: 'post', headers: auth() });
  await fetch(\`\${base}/orders\`, { method: 'GET' });
});
`;
    const out = key('test/b.test.ts', text);
    expect(out.text).toContain("app.inject({ method: 'POST', url: '/orders', payload: {}, headers: { 'Idempotency-Key': randomUUID() } })");
    expect(out.text).toContain("headers: { authorization: 'Bearer t', 'Idempotency-Key': randomUUID() },");
    expect(out.text).toContain("{ method: 'POST', headers: { ...headers, 'Idempotency-Key': randomUUID() } }");
    expect(out.text).toContain("{ method: 'post', headers: { ...auth(), 'Idempotency-Key': randomUUID() } }");
    expect(out.text).toContain("{ method: 'GET' }");
    expect(out.text.match(/import \{ randomUUID \}/g)).toHaveLength(1);
    expect(key('test/b.test.ts', out.text).text).toBe(out.text);
  });

  it("reads options with their own URL whatever takes them: a project's inject wrapper, an axios config", () => {
    const text = `it('x', async () => {
  const res = await app.injectWithLogin('basic@example.com', { method: 'POST', url: '/api/orders', payload: {} });
  await axios({ method: 'post', url: \`\${base}/orders/\${id}/refund\` });
  await app.injectWithLogin('basic@example.com', { method: 'GET', url: '/api/orders' });
});
`;
    const out = key('test/e.test.ts', text);
    expect(out.text).toContain("{ method: 'POST', url: '/api/orders', payload: {}, headers: { 'Idempotency-Key': randomUUID() } }");
    expect(out.text).toContain("headers: { 'Idempotency-Key': randomUUID() } });\n  await app.injectWithLogin('basic@example.com', { method: 'GET', url: '/api/orders' });");
    expect(out.edits[0]!.summary).toContain('2 requests');
  });

  it('adds headers on their own line to a multi-line options object', () => {
    const text = `it('x', async () => {
  await server.inject({
    method: 'POST',
    url: '/orders',
    payload: { a: 1 }
  });
});
`;
    const out = key('test/c.test.ts', text);
    expect(out.text).toContain("    payload: { a: 1 },\n    headers: { 'Idempotency-Key': randomUUID() }\n  });");
  });

  it('refuses to shadow a randomUUID the file already binds to something else', () => {
    const text = `import request from 'supertest';
const randomUUID = () => 'fixed';
it('x', async () => { await request(app).post('/orders'); });
`;
    const out = key('test/d.test.ts', text);
    expect(out.text).toBe(text);
    expect(out.manual[0]!.reason).toContain('randomUUID');
  });
});

describe('a request helper that takes the path as a parameter', () => {
  it("keys the helper's own request when one of its calls reaches a protected route, once (a second apply changes nothing)", () => {
    const text = `import request from 'supertest';
import { app } from '../src/app';

const post = (path: string, body: object) => request(app).post(path).send(body);
function inject(url: string) {
  return app.inject({ method: 'POST', url });
}

it('places an order', async () => {
  await post('/orders', { sku: 'a' });
  await inject(\`/orders/\${id}/refund\`);
});
`;
    const out = key('test/orders.test.ts', text);
    expect(out.text).toContain("const post = (path: string, body: object) => request(app).post(path).set('Idempotency-Key', randomUUID()).send(body);");
    expect(out.text).toContain("return app.inject({ method: 'POST', url, headers: { 'Idempotency-Key': randomUUID() } });");
    expect(out.edits).toHaveLength(1);
    expect(key('test/orders.test.ts', out.text).text).toBe(out.text);
  });

  it('leaves a helper alone whose calls reach no protected route, or whose path is not its parameter', () => {
    const text = `import request from 'supertest';
const post = (path: string) => request(app).post(path);
const other = () => request(app).post(somewhere());
it('x', async () => { await post('/users'); });
`;
    expect(key('test/users.test.ts', text).text).toBe(text);
  });
});

describe("Hono's typed client in a project's tests", () => {
  const HONO_ROUTES: KeyedRoute[] = [
    { action: 'createOrder', method: 'POST', path: '/api/orders' },
    { action: 'replaceOrder', method: 'PUT', path: '/api/orders/:id' },
  ];
  const hono = (text: string) => key('test/orders.test.ts', text, HONO_ROUTES);

  it('keys testClient calls to protected routes in their options: added, merged, or after an input-less call', () => {
    const text = `import { testClient } from 'hono/testing';
import { app } from '../src/app';

const client = testClient(app);

it('orders', async () => {
  await client.api.orders.$post({ json: { sku: 'a' } });
  await client.api.orders[':id'].$put({ param: { id: '1' }, json: { sku: 'b' } }, { headers: { authorization: 'Bearer t' } });
  await client.api.orders.$post();
  await client.api.orders.$get();
  await client.api.orders[':id'].$delete({ param: { id: '1' } });
  await client.api.users.$post({ json: {} });
});
`;
    const out = hono(text);
    expect(out.text).toContain("import { randomUUID } from 'crypto';");
    expect(out.text).toContain("client.api.orders.$post({ json: { sku: 'a' } }, { headers: { 'Idempotency-Key': randomUUID() } });");
    expect(out.text).toContain("{ param: { id: '1' }, json: { sku: 'b' } }, { headers: { authorization: 'Bearer t', 'Idempotency-Key': randomUUID() } });");
    expect(out.text).toContain("client.api.orders.$post({}, { headers: { 'Idempotency-Key': randomUUID() } });");
    // Not protected: another method, another route.
    expect(out.text).toContain('client.api.orders.$get();');
    expect(out.text).toContain("client.api.orders[':id'].$delete({ param: { id: '1' } });");
    expect(out.text).toContain('client.api.users.$post({ json: {} });');
    expect(out.edits[0]!.summary).toContain('3 requests');
    expect(hono(out.text).text).toBe(out.text);
  });

  it('follows aliased and required entry points, clients set in hooks, a direct testClient(app) and hc', () => {
    const text = `const { testClient: honoClient } = require('hono/testing');
const { hc } = require('hono/client');
let client;
beforeEach(() => { client = honoClient(createApp()); });
test('x', async () => {
  await client.orders.$post({ json: {} }, { headers: auth });
  await honoClient(app).api.orders['42'].$put({ json: {} }, { headers: { ...auth } });
  await hc('http://localhost', { fetch: app.request }).api.orders.$post({ json: {} });
});
`;
    const out = key('test/orders.spec.js', text, HONO_ROUTES);
    expect(out.text).toContain("const { randomUUID } = require('crypto');");
    expect(out.text).toContain("client.orders.$post({ json: {} }, { headers: { ...auth, 'Idempotency-Key': randomUUID() } });");
    expect(out.text).toContain("honoClient(app).api.orders['42'].$put({ json: {} }, { headers: { ...auth, 'Idempotency-Key': randomUUID() } });");
    expect(out.text).toContain(".api.orders.$post({ json: {} }, { headers: { 'Idempotency-Key': randomUUID() } });");
  });

  it('leaves calls that send the key already, options it cannot merge into, and look-alikes that are no Hono client', () => {
    const text = `import { testClient } from 'hono/testing';
const client = testClient(app);
it('x', async () => {
  await client.api.orders.$post({ json: {} }, { headers: { 'idempotency-key': 'k1' } });
  await client.api.orders.$post({ json: {}, header: { 'Idempotency-Key': 'k2' } });
  await client.api.orders.$post({ json: {} }, options);
  await client.api.orders.$post({ json: {} }, { headers: () => ({ authorization: 't' }) });
  await other.api.orders.$post({ json: {} });
});
`;
    expect(hono(text).text).toBe(text);
  });

  it("keys Hono's app.request(path, init), with and without headers, and a Request built for app.request or app.fetch", () => {
    const text = `it('x', async () => {
  await app.request('/api/orders', { method: 'POST', body: JSON.stringify({}) });
  await app.request('/api/orders/1', { method: 'PUT', headers: { 'content-type': 'application/json' } }, env);
  await app.fetch(new Request('http://localhost/api/orders', { method: 'POST', body: '{}' }), env);
  await app.request(new Request('http://localhost/api/orders', { method: 'GET' }));
});
`;
    const out = hono(text);
    expect(out.text).toContain("{ method: 'POST', body: JSON.stringify({}), headers: { 'Idempotency-Key': randomUUID() } }");
    expect(out.text).toContain("{ method: 'PUT', headers: { 'content-type': 'application/json', 'Idempotency-Key': randomUUID() } }, env)");
    expect(out.text).toContain("new Request('http://localhost/api/orders', { method: 'POST', body: '{}', headers: { 'Idempotency-Key': randomUUID() } }), env)");
    expect(out.text).toContain("new Request('http://localhost/api/orders', { method: 'GET' })");
    expect(out.edits[0]!.summary).toContain('3 requests');
    expect(hono(out.text).text).toBe(out.text);
  });
});

// What the keyed calls do on a real Hono app: they type-check against hono's client types and the key arrives.
describe("Hono's typed client, keyed, against a real app", () => {
  it('type-checks and sends a fresh key with each request, keeping the headers the test had', { timeout: 60_000 }, async () => {
    const root = path.resolve(import.meta.dirname, '../..');
    await mkdir(path.join(root, '.tmp'), { recursive: true });
    const dir = await mkdtemp(path.join(root, '.tmp', 'hono-client-'));
    try {
      const app = `import { Hono } from 'hono';
import { validator } from 'hono/validator';

const seen = (c: { req: { header(name: string): string | undefined } }) => ({ key: c.req.header('Idempotency-Key') ?? null, auth: c.req.header('authorization') ?? null });
export const app = new Hono()
  .post('/api/orders', validator('json', (value) => value as { sku: string }), (c) => c.json(seen(c), 201))
  .put('/api/orders/:id', (c) => c.json(seen(c)))
  .post('/api/checkout', (c) => c.json(seen(c)));
`;
      const calls = `import { testClient } from 'hono/testing';
import { app } from './app.js';

export async function run() {
  const client = testClient(app);
  const created = await client.api.orders.$post({ json: { sku: 'a' } });
  const replaced = await client.api.orders[':id'].$put({ param: { id: '1' } }, { headers: { authorization: 'Bearer t' } });
  const checkout = await client.api.checkout.$post();
  return [await created.json(), await replaced.json(), await checkout.json()];
}
`;
      const routes: KeyedRoute[] = [
        { action: 'createOrder', method: 'POST', path: '/api/orders' },
        { action: 'replaceOrder', method: 'PUT', path: '/api/orders/:id' },
        { action: 'checkout', method: 'POST', path: '/api/checkout' },
      ];
      const keyed = keyTestRequests('calls.ts', calls, routes, 'Idempotency-Key', single).text;
      expect(keyed.match(/randomUUID\(\)/g)).toHaveLength(3);
      await writeFile(path.join(dir, 'app.ts'), app);
      await writeFile(path.join(dir, 'calls.ts'), keyed);
      // The compiler package itself (ts-morph's copy carries no lib files on disk).
      const options: typescript.CompilerOptions = { strict: true, noEmit: true, target: typescript.ScriptTarget.ES2022, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], module: typescript.ModuleKind.ESNext, moduleResolution: typescript.ModuleResolutionKind.Bundler, types: ['node'], skipLibCheck: true };
      const program = typescript.createProgram([path.join(dir, 'calls.ts')], options);
      const diagnostics = typescript.getPreEmitDiagnostics(program).map((d) => typescript.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(diagnostics).toEqual([]);

      await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }');
      for (const [name, text] of [['app', app], ['calls', keyed]] as const) {
        await writeFile(path.join(dir, `${name}.js`), ts.transpileModule(text, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText);
      }
      const { run } = (await import(pathToFileURL(path.join(dir, 'calls.js')).href)) as { run: () => Promise<Array<{ key: string | null; auth: string | null }>> };
      const seen = await run();
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
      for (const request of seen) expect(request.key).toMatch(uuid);
      expect(new Set(seen.map((r) => r.key)).size).toBe(3);
      expect(seen[1]!.auth).toBe('Bearer t');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
