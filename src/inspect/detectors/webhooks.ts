import { ts } from 'ts-morph';
import { accessChain } from '../parse/astHelpers.js';
import { enclosingFunctions } from '../parse/enclosingFunctions.js';
import type { Detector, FileContext } from './detectorTypes.js';

/** Header names that give away who signs a webhook verified with a hand-written HMAC check. */
const SIGNATURE_HEADERS: Array<[RegExp, string]> = [
  [/stripe-signature/i, 'stripe'],
  [/paypal-transmission-sig/i, 'paypal'],
  [/hmacSignature|adyen/i, 'adyen'],
  [/x-hub-signature/i, 'github'],
  [/x-shopify-hmac/i, 'shopify'],
  [/x-slack-signature/i, 'slack'],
  [/x-twilio-signature/i, 'twilio'],
  [/svix-signature|webhook-signature/i, 'svix'],
  [/x-signature|x-webhook-signature/i, 'unknown'],
];

/**
 * Signature verification marks a webhook handler: Stripe constructEvent, Adyen HMAC validator, svix / Standard
 * Webhooks verify, PayPal verify-webhook-signature, and hand-written createHmac + timingSafeEqual.
 */
export const webhooks: Detector = {
  name: 'webhooks',
  mentions: /constructEvent|validateHMAC|HmacValidator|svix|standardwebhooks|verify-webhook-signature|verifyWebhookSignature|timingSafeEqual|@octokit\/webhooks/,
  detect(ctx, facts) {
    const seen = new Set<ts.Node>();
    for (const call of ctx.index.calls) {
      const provider = verificationProvider(call, ctx);
      if (!provider) continue;
      const enclosing = enclosingFunctions(call);
      const scope = enclosing.outermost ?? call;
      if (seen.has(scope)) continue;
      seen.add(scope);
      facts.webhooks.push({
        file: ctx.rel,
        line: ctx.line(call),
        ...(provider === 'unknown' ? {} : { provider }),
        verifiesSignature: true,
        dedupesEventId: false,
        enclosingKeys: enclosing.keys,
        span: [scope.getStart(ctx.sf), scope.end],
        ...(enclosing.innermost === enclosing.outermost && enclosing.name !== undefined && returnsResult(call) ? { verifierName: enclosing.name.slice(enclosing.name.lastIndexOf('.') + 1) } : {}),
      });
    }
  },
};

function verificationProvider(call: ts.CallExpression, ctx: FileContext): string | undefined {
  const callee = call.expression;
  const method = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '';
  const chain = ts.isPropertyAccessExpression(callee) ? accessChain(callee) : [method];
  if ((method === 'constructEvent' || method === 'constructEventAsync') && chain.includes('webhooks')) return 'stripe';
  if (method === 'validateHMAC' || method === 'validateHMACSignature') return 'adyen';
  if (method === 'verify' && /paypal/i.test(chain.join('.'))) return 'paypal';
  // PayPal's SDK and REST call are named so, but so is many an app's own HMAC check (boxyhq/saas-starter-kit's
  // directory-sync webhook): PayPal only where the file names it, else whoever the signature header names.
  if (method === 'verifyWebhookSignature') return /paypal|verify-webhook-signature/i.test(ctx.text) ? 'paypal' : (SIGNATURE_HEADERS.find(([re]) => re.test(ctx.text))?.[1] ?? 'unknown');
  if (method === 'verify' || method === 'verifyAndReceive' || method === 'verifySignature') {
    const root = chain[0] ?? '';
    const init = ctx.index.consts.get(root);
    const origin = init && ts.isNewExpression(init) ? ctx.originOf(init.expression) : ctx.originOf(ts.isPropertyAccessExpression(callee) ? callee.expression : callee);
    if (origin?.module === 'svix' || origin?.module === 'standardwebhooks') return 'svix';
    if (origin?.module === '@octokit/webhooks') return 'github';
    return undefined;
  }
  if (method === 'timingSafeEqual') {
    const scope = enclosingFunctions(call).outermost;
    const text = scope ? scope.getText(ctx.sf) : '';
    if (!/createHmac|hmac/i.test(text)) return undefined;
    return SIGNATURE_HEADERS.find(([re]) => re.test(text))?.[1] ?? 'unknown';
  }
  return undefined;
}

/** The call's value is what its function returns: `return x(…)`, `return await x(…)`, or an arrow's body `=> x(…)`. */
function returnsResult(call: ts.CallExpression): boolean {
  let node: ts.Node = call;
  while (ts.isAwaitExpression(node.parent) || ts.isParenthesizedExpression(node.parent) || ts.isAsExpression(node.parent)) node = node.parent;
  return ts.isReturnStatement(node.parent) || (ts.isArrowFunction(node.parent) && node.parent.body === node);
}
