import { ts } from 'ts-morph';
import { eventIdDedupe } from '../../inspect/detectors/dedupeEvidence.js';
import { mongoOnly } from '../documentStore.js';
import { freshClaim } from '../freshClaim.js';
import { stripeWebhooks } from '../stripeWebhooks.js';
import type { Rule, RuleReport } from '../types.js';
import { collect } from '../walk.js';

/**
 * Names of stores that record processed events (`prisma.webhookEvent`, `processed_events`, `stripe_events`,
 * `ProcessedEvent`). Not a variable holding the event itself: `ctx.state.stripeEvent`, `const webhookEvent = …`.
 */
const EVENT_STORE = /(processed|handled|seen)_?events?\b|(webhook|stripe)_events?\b|(webhook|stripe)Events\b|\b(prisma|db|tx|models?)\s*\.\s*(webhook|stripe)Event\b|['"`](webhook|stripe)_?events?['"`]|event_?ids?\b|eventId/i;
const LOGGING = /^(console|logger|log|this\.logger)\./;

/** Stripe delivers at least once and resends for up to three days: the handler must remember event ids it has applied. */
export const webhookWithoutEventDedupe: Rule = {
  id: 'webhook-without-event-dedupe',
  severity: 'error',
  title: 'Webhook applies events without remembering their id',
  description:
    'Stripe delivers each event at least once and retries deliveries that time out or fail, so the same event can ' +
    'arrive twice, concurrently or days apart. Nothing records the event id, so every delivery runs the side effects again.',
  fix: 'Record `event.id` in a table with a unique constraint in the same transaction as the event\'s writes (INSERT … ON CONFLICT DO NOTHING, skip when no row was inserted), after the signature check.',
  docsAnchor: 'finding-webhook-without-event-dedupe',
  mentions: /constructEvent/,
  checkFile(ctx) {
    const out: RuleReport[] = [];
    // A claim on the event store keyed on a fresh value (`ON CONFLICT (id)` with `randomUUID()` as the id) records
    // nothing a redelivery would meet: the store's name and the id inside that claim prove nothing.
    const scan = eventIdDedupe([{ file: ctx.rel, text: ctx.text, line: 1 }]);
    const refused = scan.evidence ? undefined : scan.perAttemptClaim;
    const inClaim = refused ? statementAt(ctx.sf, refused.line) : undefined;
    for (const hook of stripeWebhooks(ctx.sf, ctx.text)) {
      if (!refused && EVENT_STORE.test(ctx.text.replace(/\/\/.*$/gm, ''))) continue;
      if (hook.eventName && usesEventId(ctx.sf, hook.eventName, inClaim)) continue;
      out.push({ node: hook.verify, ...(mongoOnly(ctx) ? { fix: MONGO_FIX } : {}), message: `Stripe webhook verified here never records \`${hook.eventName ?? 'event'}.id\`: a redelivered event is applied again.${freshClaim(refused)}` });
    }
    return out;
  },
};

const MONGO_FIX =
  'Record `event.id` in a collection with a unique index on it, after the signature check: `insertOne({ _id: event.id })` in the same ' +
  'transaction as the event\'s writes (`session.withTransaction`, a replica set), and a duplicate-key error (code 11000) means the event ' +
  'was applied: answer 2xx and skip it.';

/** The innermost statement (not a block) on `line`, 1-based. */
function statementAt(sf: ts.SourceFile, line: number): ts.Node | undefined {
  let found: ts.Node | undefined;
  const visit = (node: ts.Node): void => {
    const from = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    const to = sf.getLineAndCharacterOfPosition(node.end).line + 1;
    if (line < from || line > to) return;
    if (ts.isStatement(node) && !ts.isBlock(node)) found = node;
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** `event.id` passed to something other than a logger (a lookup, an insert, a lock), outside `except`. */
function usesEventId(sf: ts.SourceFile, name: string, except?: ts.Node): boolean {
  return collect(sf, ts.isPropertyAccessExpression).some((access) => {
    if (access.name.text !== 'id' || access.expression.getText() !== name) return false;
    if (except && access.pos >= except.pos && access.end <= except.end) return false;
    for (let p: ts.Node = access.parent; !ts.isSourceFile(p); p = p.parent) {
      if (ts.isCallExpression(p)) return !LOGGING.test(p.expression.getText());
      if (ts.isTemplateExpression(p) && ts.isCallExpression(p.parent) && LOGGING.test(p.parent.expression.getText())) return false;
      if (ts.isBlock(p)) break;
    }
    return false;
  });
}
