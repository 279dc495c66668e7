import { ts } from 'ts-morph';
import { stripeWebhooks } from '../stripeWebhooks.js';
import type { Rule, RuleReport } from '../types.js';
import { calls } from '../walk.js';

/** An id read from the unverified body, e.g. `req.body.id`, `JSON.parse(raw).id`, `payload.id`. */
const UNVERIFIED_ID = /\b(body|payload|rawBody|json|data)\.id\b|JSON\.parse\([^)]*\)\.id/;
const STORE_CALL = /\b(find\w*|get|exists|insert\w*|create\w*|upsert|set|sadd|sismember|setnx|add|has)$/i;

/** Dedupe on an id an attacker typed: one forged request with a real event id marks that event handled. */
export const webhookDedupeBeforeVerification: Rule = {
  id: 'webhook-dedupe-before-verification',
  severity: 'error',
  title: 'Webhook deduplicates before verifying the signature',
  description:
    'The event id is looked up or recorded before the signature is checked, so it comes from an unauthenticated body. ' +
    'A forged request carrying a real event id makes the genuine delivery look like a duplicate and it is dropped.',
  fix: 'Verify the signature first (constructEvent), then deduplicate on the verified `event.id`.',
  docsAnchor: 'finding-webhook-dedupe-before-verification',
  mentions: /constructEvent/,
  checkFile(ctx) {
    const out: RuleReport[] = [];
    for (const hook of stripeWebhooks(ctx.sf, ctx.text)) {
      const before = calls(hook.handler).filter((c) => c.end <= hook.verify.getStart() && !ts.isCallExpression(c.parent));
      const early = before.find((c) => {
        const name = ts.isPropertyAccessExpression(c.expression) ? c.expression.name.text : c.expression.getText();
        return STORE_CALL.test(name) && c.arguments.some((a) => UNVERIFIED_ID.test(a.getText()));
      });
      if (early) out.push({ node: early, message: `\`${early.expression.getText()}\` uses the event id from the unverified body before the signature check on line ${ctx.sf.getLineAndCharacterOfPosition(hook.verify.getStart()).line + 1}.` });
    }
    return out;
  },
};
