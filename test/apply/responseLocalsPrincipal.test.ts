import { Project, SyntaxKind } from 'ts-morph';
import { describe, expect, it } from 'vitest';
import { principalPathIn } from '../../src/apply/principalPath.js';
import { renderInstance } from '../../src/apply/renderInstance.js';
import { shopifyPrincipal } from '../../src/apply/requestPrincipal.js';

const handlerOf = (code: string) => {
  const sf = new Project({ useInMemoryFileSystem: true }).createSourceFile('routes.ts', code);
  return sf.getFirstDescendantByKindOrThrow(SyntaxKind.ArrowFunction);
};

describe("an Express handler that reads its caller from res.locals (what the app's auth middleware left there)", () => {
  const handler = handlerOf('app.post("/orders", async (req, res) => { await createOrder(res.locals.user.id, req.body); res.sendStatus(201); });');

  it('gives the instance a principal that reads the same thing through req.res', () => {
    const path = principalPathIn(handler, true);
    expect(path).toEqual(['res', 'locals', 'user', 'id']);
    const instance = renderInstance('express', path, 'postgres');
    expect(instance).toContain('principal: (req) => (req as typeof req & AuthenticatedUser).res?.locals?.user?.id,');
  });

  it('only for Express, and only for an id below res.locals', () => {
    expect(principalPathIn(handler)).toBeUndefined();
    expect(principalPathIn(handlerOf('app.post("/x", (req, res) => res.json(res.locals.shopify.session));'), true)).toBeUndefined();
  });
});

describe('a flat caller id an authentication middleware set on the request (req.userId = decoded.id)', () => {
  it("is the principal when the handler reads it (Henry's Final Project: req.UserId), and only for an id by name", () => {
    expect(principalPathIn(handlerOf('createOrder = async (req, res) => { const userId = req.UserId; res.sendStatus(201); };'), true)).toEqual(['UserId']);
    expect(principalPathIn(handlerOf('const f = async (req, res) => { await save(req.userId, req.body); };'))).toEqual(['userId']);
    expect(renderInstance('express', ['userId'], 'postgres')).toContain('principal: (req) => (req as typeof req & AuthenticatedUser).userId,');
    expect(principalPathIn(handlerOf('const f = async (req, res) => { await save(req.id, req.body); };'))).toBeUndefined();
    expect(principalPathIn(handlerOf('const f = async (req, res) => { await save(req.orderId); };'))).toBeUndefined();
  });
});

describe("a Shopify app's caller (Shopify/shopify-app-template-node@a8a8895)", () => {
  it('is the shop validateAuthenticatedSession() left in res.locals', () => {
    const setup = "import { shopifyApp } from '@shopify/shopify-app-express';\nexport default shopifyApp({});\n";
    const server = 'app.use("/api/*", shopify.validateAuthenticatedSession());\n';
    expect(shopifyPrincipal([setup, server])).toEqual(['res', 'locals', 'shopify', 'session', 'shop']);
    expect(shopifyPrincipal([server])).toBeUndefined();
    expect(renderInstance('express', shopifyPrincipal([setup, server]), 'sqlite')).toContain('(req as typeof req & AuthenticatedUser).res?.locals?.shopify?.session?.shop');
  });
});
