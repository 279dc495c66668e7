import { ts } from 'ts-morph';
import { objectProperty, stringValue, unwrap } from '../parse/astHelpers.js';
import type { FileContext, OwnerInfo } from './detectorTypes.js';

export const HTTP_FRAMEWORKS = ['express', 'fastify', 'koa', 'hono'] as const;

const MODULE_FRAMEWORK: Record<string, string> = {
  express: 'express', fastify: 'fastify', koa: 'koa', '@koa/router': 'koa', 'koa-router': 'koa', hono: 'hono',
  'hono/quick': 'hono', 'hono/tiny': 'hono', '@hono/zod-openapi': 'hono', 'fastify-plugin': 'fastify',
};

export function frameworkOfModule(module: string): string | undefined {
  return Object.hasOwn(MODULE_FRAMEWORK, module) ? MODULE_FRAMEWORK[module] : undefined;
}

/**
 * What a variable initializer creates, if it is a router-like object: `express()`, `Router()`, `Fastify()`,
 * `new Koa()`, `new Router({ prefix })` from @koa/router, `new Hono()`. Works for aliases because it asks
 * where the callee was imported from, not what it is called.
 */
export function ownerFromInitializer(init: ts.Expression, ctx: FileContext): OwnerInfo | undefined {
  const expr = unwrap(init);
  if (ts.isCallExpression(expr)) {
    const origin = ctx.originOf(expr.expression);
    if (!origin) return undefined;
    if (origin.module === 'express') {
      if (origin.imported === 'Router') return { framework: 'express', root: false };
      if (origin.imported === 'default' || origin.imported === '*' || origin.imported === 'express') return { framework: 'express', root: true };
    }
    if (origin.module === 'fastify' && /^(default|\*|fastify|Fastify)$/.test(origin.imported)) return { framework: 'fastify', root: true };
    return undefined;
  }
  if (ts.isNewExpression(expr)) {
    const origin = ctx.originOf(expr.expression);
    if (!origin) return undefined;
    if (origin.module === 'koa') return { framework: 'koa', root: true };
    if (origin.module === '@koa/router' || origin.module === 'koa-router') {
      const prefix = stringValue(objectProperty(expr.arguments?.[0], 'prefix'), ctx.index.consts);
      return { framework: 'koa', root: false, ...(prefix ? { prefix } : {}) };
    }
    if (frameworkOfModule(origin.module) === 'hono' && /^(Hono|OpenAPIHono|default)$/.test(origin.imported)) {
      return { framework: 'hono', root: true };
    }
    if (origin.module === 'express' && origin.imported === 'Router') return { framework: 'express', root: false };
  }
  return undefined;
}

/** Framework named by a parameter's type annotation: `(app: Express)`, `(fastify: FastifyInstance)`. */
export function frameworkOfType(type: ts.TypeNode | undefined, ctx: FileContext): string | undefined {
  if (!type || !ts.isTypeReferenceNode(type)) return undefined;
  const name = type.typeName;
  const root = ts.isIdentifier(name) ? name : ts.isQualifiedName(name) && ts.isIdentifier(name.left) ? name.left : undefined;
  const origin = root ? ctx.index.imports.get(root.text) : undefined;
  return origin ? frameworkOfModule(origin.module) : undefined;
}

/** The single HTTP framework a file or package uses, when there is exactly one to guess. */
export function guessFramework(ctx: FileContext): string | undefined {
  const fromImports = new Set<string>();
  for (const binding of ctx.index.imports.values()) {
    const fw = frameworkOfModule(binding.module);
    if (fw) fromImports.add(fw);
  }
  if (fromImports.size === 1) return [...fromImports][0];
  if (fromImports.size > 1) return undefined;
  const fromStack = ctx.pkg.stack.frameworks.filter((f) => (HTTP_FRAMEWORKS as readonly string[]).includes(f));
  return fromStack.length === 1 ? fromStack[0] : undefined;
}

/** Receivers that are HTTP clients, not servers: `axios.post('/x', body)` must not become an endpoint. */
export const CLIENT_NAMES = /^(axios|http|https|api|apiClient|client|httpClient|request|got|ky|superagent|agent|fetcher|instance|\$http|\$fetch|ofetch|supertest|needle|wretch|undici)$/i;
const CLIENT_MODULES = /^(axios|got|ky|superagent|node-fetch|undici|ofetch|needle|wretch|supertest|@angular\/common\/http)$/;

export function isHttpClient(name: string, ctx: FileContext): boolean {
  if (CLIENT_NAMES.test(name)) return true;
  const origin = ctx.index.imports.get(name);
  if (origin && CLIENT_MODULES.test(origin.module)) return true;
  const init = ctx.index.consts.get(name);
  if (init) {
    const expr = unwrap(init);
    if (ts.isCallExpression(expr) && ts.isPropertyAccessExpression(expr.expression) && expr.expression.name.text === 'create') {
      const base = ctx.originOf(expr.expression.expression);
      if (base && CLIENT_MODULES.test(base.module)) return true;
    }
  }
  return false;
}
