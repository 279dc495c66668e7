import { ts } from 'ts-morph';
import { errorStatusIn, stripeWebhooks } from '../stripeWebhooks.js';
import type { Rule, RuleReport } from '../types.js';
import { collect } from '../walk.js';

/** An event type the handler ignores must still be acknowledged, or the provider retries it for days. */
export const webhookRejectsUnhandledEvents: Rule = {
  id: 'webhook-rejects-unhandled-events',
  severity: 'warning',
  title: 'Webhook answers non-2xx for event types it does not handle',
  description:
    'Event types the handler has no case for get an error status (or an exception, which becomes 500). Stripe treats ' +
    'that as a failed delivery: it retries the event for up to three days, the endpoint shows as failing, and Stripe may disable it.',
  fix: 'Acknowledge event types you do not handle with 200 (log them if useful); keep 4xx for a bad signature and 5xx for real processing failures you want retried.',
  docsAnchor: 'finding-webhook-rejects-unhandled-events',
  mentions: /constructEvent/,
  checkFile(ctx) {
    const out: RuleReport[] = [];
    if (!stripeWebhooks(ctx.sf, ctx.text).length) return out;
    for (const clause of collect(ctx.sf, ts.isDefaultClause)) {
      if (!isEventTypeSwitch(clause.parent.parent) || insideTypeFilter(clause)) continue;
      const bad = errorStatusIn(clause) ?? collect(clause, ts.isThrowStatement).find((t) => !acknowledgedByCatch(t));
      if (bad) out.push({ node: bad, message: `The default branch of the switch on \`${clause.parent.parent.expression.getText()}\` answers ${ts.isThrowStatement(bad) ? 'with an exception' : bad.getText()} for event types it does not handle.` });
    }
    for (const stmt of collect(ctx.sf, ts.isIfStatement)) {
      if (!stmt.elseStatement || !/\.type\b/.test(stmt.expression.getText()) || ts.isIfStatement(stmt.elseStatement)) continue;
      const bad = errorStatusIn(stmt.elseStatement);
      if (bad) out.push({ node: bad, message: `Event types outside \`${stmt.expression.getText()}\` are answered with ${bad.getText()}.` });
    }
    return out;
  },
};

/** A throw inside a try whose catch answers 2xx (no error status, no rethrow) is acknowledged after all. */
function acknowledgedByCatch(node: ts.Node): boolean {
  for (let p = node.parent; p && !ts.isSourceFile(p); p = p.parent) {
    if (ts.isTryStatement(p) && p.catchClause && node.pos >= p.tryBlock.pos && node.end <= p.tryBlock.end) {
      return !errorStatusIn(p.catchClause) && !collect(p.catchClause, ts.isThrowStatement).length;
    }
  }
  return false;
}

/** A switch reached only for types an enclosing `if (relevant.has(event.type))` let through: its default is for those. */
function insideTypeFilter(node: ts.Node): boolean {
  for (let p = node.parent; p && !ts.isSourceFile(p); p = p.parent) {
    if (ts.isIfStatement(p) && node.pos >= p.thenStatement.pos && node.end <= p.thenStatement.end && /\.type\b/.test(p.expression.getText())) return true;
  }
  return false;
}

function isEventTypeSwitch(node: ts.Node): node is ts.SwitchStatement {
  return ts.isSwitchStatement(node) && /(^|\.)type$/.test(node.expression.getText());
}
