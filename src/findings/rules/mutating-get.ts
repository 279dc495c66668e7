import { ts } from 'ts-morph';
import { stringValue } from '../../inspect/parse/astHelpers.js';
import { dataAccesses } from '../dataAccess.js';
import { providerCalls, repeatsSafely } from '../providerCalls.js';
import type { Rule, RuleReport } from '../types.js';
import { calls, collect } from '../walk.js';

/** Sign-in callbacks and e-mail links are GETs that must change state; they are designed around it. */
const EXPECTED_GET = /auth|callback|login|logout|signin|signout|oauth|verify|confirm|unsubscribe|magic|invite|cron|webhook/i;
const WRITE = /\.(create|createMany|insert|insertOne|update|updateMany|upsert|delete|deleteMany|destroy|save|remove)\(/;

/** Browsers prefetch, crawlers follow links and proxies retry GETs freely: a GET must not change anything. */
export const mutatingGet: Rule = {
  id: 'mutating-get',
  severity: 'warning',
  title: 'GET handler changes state',
  description:
    'A GET route writes to the database or calls a provider to create something. GET is safe and idempotent by ' +
    'contract: link prefetching, crawlers, retries by proxies and the back button repeat it without asking, and ' +
    'no Idempotency-Key header travels with it.',
  fix: 'Move the change to a POST (or PUT/DELETE) route and call it from a form or fetch; keep the GET for reading.',
  docsAnchor: 'finding-mutating-get',
  // A `.get(` / `.get<` route call or a Next.js `GET` export (see getHandlers).
  mentions: /\.\s*get\s*[(<]|\bGET\b/,
  checkFile(ctx) {
    const out: RuleReport[] = [];
    for (const handler of getHandlers(ctx.sf, ctx.rel)) {
      if (EXPECTED_GET.test(handler.path)) continue;
      const stripe = providerCalls(ctx).find((c) => c.call.pos >= handler.fn.pos && c.call.end <= handler.fn.end && !repeatsSafely(c));
      const write = stripe?.call ?? dataAccesses(handler.fn).find((a) => a.kind !== 'read')?.call ?? calls(handler.fn).find((c) => WRITE.test(`${c.expression.getText()}(`) && /prisma|\bdb\b|supabase|repo|model|knex/i.test(c.expression.getText()));
      if (!write) continue;
      out.push({ node: handler.at, message: `GET ${handler.path} changes state: \`${write.expression.getText().replace(/\s+/g, '').slice(0, 60)}\` runs on every prefetch, crawl or replay.` });
    }
    return out;
  },
};

interface GetHandler {
  at: ts.Node;
  path: string;
  fn: ts.Node;
}

function getHandlers(sf: ts.SourceFile, rel: string): GetHandler[] {
  const out: GetHandler[] = [];
  // Express, Fastify, Koa router, Hono: app.get('/path', ..., handler)
  for (const call of calls(sf)) {
    if (!ts.isPropertyAccessExpression(call.expression) || call.expression.name.text !== 'get') continue;
    const path = stringValue(call.arguments[0]);
    const fn = call.arguments[call.arguments.length - 1];
    if (!path?.startsWith('/') || !fn || !(ts.isArrowFunction(fn) || ts.isFunctionExpression(fn))) continue;
    out.push({ at: call, path, fn });
  }
  // Next.js route handlers: export async function GET() / export const GET = …
  if (/(^|\/)app\/(.+\/)?route\.[cm]?[jt]sx?$/.test(rel)) {
    const path = `/${rel.replace(/^(.*\/)?app\//, '').replace(/\/?route\.[cm]?[jt]sx?$/, '')}`;
    for (const fn of collect(sf, ts.isFunctionDeclaration)) if (fn.name?.text === 'GET' && fn.body) out.push({ at: fn.name, path, fn });
    for (const decl of collect(sf, ts.isVariableDeclaration)) {
      if (ts.isIdentifier(decl.name) && decl.name.text === 'GET' && decl.initializer) out.push({ at: decl.name, path, fn: decl.initializer });
    }
  }
  return out;
}
