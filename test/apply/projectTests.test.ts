import { describe, expect, it } from 'vitest';
import { ts } from 'ts-morph';
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
