import { ts } from 'ts-morph';
import { calls, outermostFunction } from './walk.js';

export interface StripeWebhook {
  /** `stripe.webhooks.constructEvent(...)` */
  verify: ts.CallExpression;
  /** The function that receives the request. */
  handler: ts.FunctionLikeDeclaration | ts.SourceFile;
  /** Variable holding the verified event, e.g. `event`. */
  eventName?: string;
}

/** Stripe webhook handlers, recognised by signature verification. */
export function stripeWebhooks(sf: ts.SourceFile, text: string): StripeWebhook[] {
  if (!/constructEvent/.test(text)) return [];
  return calls(sf)
    .filter((c) => ts.isPropertyAccessExpression(c.expression) && /^constructEvent(Async)?$/.test(c.expression.name.text))
    .map((verify) => {
      const eventName = assignedName(verify);
      return { verify, handler: outermostFunction(verify) ?? sf, ...(eventName ? { eventName } : {}) };
    });
}

function assignedName(call: ts.Node): string | undefined {
  let node: ts.Node = call;
  while (ts.isAwaitExpression(node.parent) || ts.isParenthesizedExpression(node.parent) || ts.isAsExpression(node.parent)) node = node.parent;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isIdentifier(parent.left)) return parent.left.text;
  return undefined;
}

/** Stripe event type names (`customer.subscription.updated`) in case clauses or comparisons mark an event handler. */
export const STRIPE_EVENT_TYPE = /['"`](customer|invoice|checkout|payment_intent|charge|price|product|subscription_schedule|setup_intent|payout|account)\.[a-z_.]+['"`]/;

/** A status literal ≥ 300 written as a response: `res.status(400)`, `{ status: 500 }`, `reply.code(400)`, `new Response(x, { status: 400 })`. */
export function errorStatusIn(node: ts.Node): ts.Node | undefined {
  let found: ts.Node | undefined;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (ts.isNumericLiteral(n) && Number(n.text) >= 300 && Number(n.text) < 600) {
      const p = n.parent;
      const isStatusCall = ts.isCallExpression(p) && ts.isPropertyAccessExpression(p.expression) && /^(status|code|sendStatus|writeHead)$/.test(p.expression.name.text);
      const isStatusProp = ts.isPropertyAssignment(p) && /^(status|statusCode)$/.test(p.name.getText());
      if (isStatusCall || isStatusProp) found = n;
    }
    if (!found) ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
}
