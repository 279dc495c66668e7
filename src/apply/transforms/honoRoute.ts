import { Node, SyntaxKind } from 'ts-morph';
import { principalPathIn } from '../principalPath.js';
import type { Transform } from './context.js';
import { isFunctionLike, wireMiddlewareRoute } from './koaRoute.js';

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const ID_NAMES = new Set(['id', 'userId', 'sub', 'accountId', 'tenantId']);

/**
 * Hono: how the handler reads the caller's id from the context's variables, `c.get('user').id` or `c.var.user.id`
 * (what hono/jwt and auth middleware set), as the path below `c` (['var', 'user', 'id']); never `c.env` or the body.
 */
export function honoPrincipal(handler: Node): string[] | undefined {
  if (!isFunctionLike(handler)) return undefined;
  const direct = principalPathIn(handler);
  if (direct?.[0] === 'var') return direct;
  const context = handler.getParameters()[0]?.getNameNode();
  if (!context || !Node.isIdentifier(context)) return undefined;
  for (const call of handler.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    const callee = call.getExpression();
    const [name] = call.getArguments();
    if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== 'get' || callee.getExpression().getText() !== context.getText()) continue;
    if (!name || !(Node.isStringLiteral(name) || Node.isNoSubstitutionTemplateLiteral(name)) || !IDENTIFIER.test(name.getLiteralValue())) continue;
    const path = ['var', name.getLiteralValue()];
    let node: Node = call;
    for (let parent = node.getParent(); parent && Node.isPropertyAccessExpression(parent) && parent.getExpression() === node; parent = node.getParent()) {
      path.push(parent.getName());
      node = parent;
    }
    if (path.length >= 3 && path.length <= 4 && ID_NAMES.has(path[path.length - 1]!)) return path;
  }
  return undefined;
}

/** Hono: `app.post('/payments', validator, idempotency.createPayment, handler)`, on Node or a Web-standard runtime. */
export const wireHonoRoute: Transform = (sf, target, context) => wireMiddlewareRoute('hono', honoPrincipal)(sf, target, context);
