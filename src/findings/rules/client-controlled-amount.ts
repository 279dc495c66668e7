import { ts } from 'ts-morph';
import { propertyName } from '../../inspect/parse/astHelpers.js';
import { clientInputNames, REQUEST_BODY } from '../requestPath.js';
import { providerCalls } from '../providerCalls.js';
import type { Rule, RuleReport } from '../types.js';
import { collect, outermostFunction } from '../walk.js';

/** Parameters that set what the customer pays. A price *id* chosen by the client is a product choice; an amount is not. */
const AMOUNT = /^(amount|unit_amount|unit_amount_decimal|amount_decimal|price_data|application_fee_amount|line_items)$/;

/** The server must decide what is charged: a body field that reaches the amount lets any client pay what it likes. */
export const clientControlledAmount: Rule = {
  id: 'client-controlled-amount',
  severity: 'error',
  title: 'Client-controlled amount or price sent to the provider',
  description:
    'An amount, price object or line item list sent to the payment provider comes straight from the request body. Any client can ' +
    'change it; the fingerprint then treats a tampered amount as a different, legitimate request.',
  fix: 'Accept only identifiers from the client (product or price id, quantity within bounds) and look the amount up on the server (your catalogue or the provider\'s price object).',
  docsAnchor: 'finding-client-controlled-amount',
  mentions: /stripe|adyen|paypal|square|mollie|paymentIntents|checkout\.sessions/i,
  checkFile(ctx) {
    const out: RuleReport[] = [];
    for (const c of providerCalls(ctx)) {
      if (!c.params) continue;
      const fn = outermostFunction(c.call);
      if (!fn) continue;
      const tainted = clientInputNames(fn);
      for (const prop of collect(c.params, (n): n is ts.PropertyAssignment | ts.ShorthandPropertyAssignment => ts.isPropertyAssignment(n) || ts.isShorthandPropertyAssignment(n))) {
        const name = propertyName(prop.name) ?? '';
        if (!AMOUNT.test(name)) continue;
        const value = ts.isPropertyAssignment(prop) ? prop.initializer : prop.name;
        // A line item list or price object is the client's when passed whole; otherwise its amounts are checked by name.
        const source = name === 'line_items' || name === 'price_data' ? (ts.isIdentifier(value) && tainted.has(value.text)) || REQUEST_BODY.test(value.getText()) ? value.getText() : undefined : fromClient(value, tainted);
        if (!source) continue;
        out.push({ node: prop, message: `${c.provider} ${c.operation} takes \`${name}\` from the request (\`${source}\`): the client decides what is charged.` });
        break;
      }
    }
    return out;
  },
};

/** The client-controlled identifier or expression inside `value`, if any. Conversions (`Number(x) * 100`) keep the taint. */
function fromClient(value: ts.Expression, tainted: ReadonlySet<string>): string | undefined {
  if (REQUEST_BODY.test(value.getText())) return value.getText();
  let found: string | undefined;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (ts.isIdentifier(node) && tainted.has(node.text) && !(ts.isPropertyAccessExpression(node.parent) && node.parent.name === node)) {
      // `price: body.priceId` style ids are a product choice; only flag when the value is not an id lookup.
      if (!/id$/i.test(node.parent.getText()) || ts.isShorthandPropertyAssignment(node.parent)) found = node.parent.getText().slice(0, 60);
    }
    ts.forEachChild(node, visit);
  };
  visit(value);
  return found;
}
