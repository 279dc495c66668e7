import { ts } from 'ts-morph';
import { isRequestPathFile } from '../requestPath.js';
import type { Rule, RuleReport } from '../types.js';
import { calls, enclosingLoops, functionLabel, innermostFunction } from '../walk.js';

const SLEEP = /^(sleep|delay|wait|pause|setTimeout|timers\.setTimeout|backoff)$/;

/** A handler that sleeps and tries again holds the caller (and the provider's webhook timeout) while the retry it races runs. */
export const sleepRetryInRequestPath: Rule = {
  id: 'sleep-retry-in-request-path',
  severity: 'warning',
  title: 'Sleep-and-retry loop in a request or webhook path',
  description:
    'A loop waits and tries again inside code a caller is waiting on. The caller (a browser, a load balancer, Stripe ' +
    'with its delivery timeout) gives up first and retries, so the original and the retry run side by side, and the ' +
    'handler holds a worker for the whole back-off.',
  fix: 'Return quickly and retry out of band: enqueue a job (with its own idempotency key) or answer 5xx so the caller retries; if the loop waits for a row another request writes, read it from the provider or the event payload instead.',
  docsAnchor: 'finding-sleep-retry-in-request-path',
  mentions: /setTimeout|sleep|delay|wait\(/,
  checkFile(ctx) {
    if (!isRequestPathFile(ctx.rel, ctx.text)) return [];
    const out: RuleReport[] = [];
    const seen = new Set<ts.Node>();
    for (const call of calls(ctx.sf)) {
      const waiting = sleepAt(call);
      if (!waiting) continue;
      const loop = enclosingLoops(waiting)[0];
      if (!loop || seen.has(loop)) continue;
      seen.add(loop);
      const fn = functionLabel(innermostFunction(loop));
      out.push({ node: loop, message: `${fn ? `${fn} loops` : 'A loop'} with \`${call.getText().slice(0, 60)}\` between attempts inside a request or webhook path.` });
    }
    return out;
  },
};

/** The awaited expression that pauses the handler, or undefined when `call` is not a sleep. */
function sleepAt(call: ts.CallExpression): ts.Node | undefined {
  const callee = call.expression;
  const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? `${callee.expression.getText()}.${callee.name.text}` : '';
  if (!SLEEP.test(name)) return undefined;
  if (ts.isAwaitExpression(call.parent)) return call.parent;
  // `await new Promise((r) => setTimeout(r, ms))`: the bare setTimeout waits only inside an awaited promise.
  let node: ts.Node = call;
  for (let i = 0; i < 6 && node.parent; i++) {
    node = node.parent;
    if (ts.isNewExpression(node) && node.expression.getText() === 'Promise') return ts.isAwaitExpression(node.parent) ? node.parent : undefined;
  }
  return undefined;
}
