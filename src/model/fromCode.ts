import { providerTables } from '../inspect/providers/index.js';
import { channelWords, libraryLabel, messagePhrase } from '../inspect/messageLabels.js';
import type { ActionCodeFacts, MessageFact, ProviderCallFact } from './codeFacts.js';
import { impactOfOperation, objectOf, providerName, worstImpact, type OperationImpact } from './impact.js';
import { brokerDestination } from './labels.js';

/** What the document says about one action from its code: handler, calls with their cost, writes. Plain data. */
export interface ActionCodeDesign {
  handler: string;
  handlerName?: string;
  calls: Array<{ call: string; location: string; keyed: boolean; keyPerAttempt?: boolean; via?: string; repeatsSafely?: boolean; impact: OperationImpact }>;
  writes: Array<{ target: string; kind: string; location: string; unique?: string; freshKey?: string; relative?: string[]; database?: string }>;
  /** Messages to a person: absent when the code sends none, so older designs keep their shape. */
  messages?: Array<{ channel: MessageFact['channel']; library: string; location: string; keyed: boolean; keyPerAttempt?: boolean; via?: string }>;
  publishes?: Array<{ broker: string; topic?: string; location: string; via?: string }>;
  /** The check that refuses a repeat before any effect (ActionCodeFacts.refusal). */
  refusal?: { location: string; message: string };
}

/** A saga proposed from the code: steps named after the calls the handler makes in sequence. */
export interface ProposedSaga {
  action: string;
  slug: string;
  steps: Array<{ index: number; name: string; call: string; location: string; compensation?: string; compensationCall?: string }>;
  note: string;
}

/** `stripe` + `customers.create` → `stripe.customers.create`; Adyen and PayPal keep their operation names. */
export function callName(call: Pick<ProviderCallFact, 'provider' | 'operation'>): string {
  return call.operation.includes('/') ? `${call.provider} ${call.operation}` : `${call.provider}.${call.operation}`;
}

export function codeDesign(facts: ActionCodeFacts): ActionCodeDesign {
  return {
    handler: `${facts.handler.file}:${facts.handler.line}`,
    ...(facts.handler.name ? { handlerName: facts.handler.name } : {}),
    calls: facts.calls.map((c) => ({
      call: callName(c),
      location: `${c.file}:${c.line}`,
      keyed: c.keyed,
      ...(c.keyPerAttempt ? { keyPerAttempt: true } : {}),
      ...(c.via && c.via !== facts.handler.name ? { via: c.via } : {}),
      ...(c.repeatsSafely ? { repeatsSafely: true } : {}),
      impact: c.repeatsSafely ? { impact: 'harmless' as const, severity: 'note' as const, text: `repeats \`${callName(c)}\`, which sets the same state at ${providerName(c.provider)} again: harmless` } : impactOfOperation(c.provider, c.operation, c.risk),
    })),
    writes: facts.writes.map((w) => ({ target: w.target, kind: w.kind, location: `${w.file}:${w.line}`, ...(w.uniqueColumns?.length ? { unique: w.uniqueColumns.join('; ') } : {}), ...(w.freshKey ? { freshKey: w.freshKey } : {}), ...(w.relative ? { relative: w.relative } : {}), ...(w.database ? { database: w.database } : {}) })),
    ...(facts.messages?.length ? { messages: facts.messages.map((m) => ({ channel: m.channel, library: m.library, location: `${m.file}:${m.line}`, keyed: m.keyed, ...(m.keyPerAttempt ? { keyPerAttempt: true } : {}), ...(m.via && m.via !== facts.handler.name ? { via: m.via } : {}) })) } : {}),
    ...(facts.publishes?.length ? { publishes: facts.publishes.map((p) => ({ broker: p.broker, ...(p.topic !== undefined ? { topic: p.topic } : {}), location: `${p.file}:${p.line}`, ...(p.via && p.via !== facts.handler.name ? { via: p.via } : {}) })) } : {}),
    ...(facts.refusal ? { refusal: { location: `${facts.refusal.file}:${facts.refusal.line}`, message: facts.refusal.message } } : {}),
  };
}

/**
 * "sends the e-mail again to the same person (nodemailer, `file:line`)": the unkeyed sends first; a send with the
 * library's idempotency key (Resend) is dropped by the provider only while the key is the same one.
 */
function messageImpact(messages: NonNullable<ActionCodeDesign['messages']>): { text: string } | undefined {
  if (messages.length === 0) return undefined;
  const unkeyed = messages.filter((m) => !m.keyed || m.keyPerAttempt);
  const first = unkeyed[0] ?? messages[0]!;
  const what = channelWords(first.channel).replace(/^an? /, 'the ');
  const where = `(${libraryLabel(first.library)}, \`${first.location}\`)`;
  if (unkeyed.length > 0) return { text: `sends ${what} again to the same person ${where}` };
  return { text: `sends ${what} again to the same person unless the idempotency key it passes ${where} is the same on the retry` };
}

const VERB = { create: 'inserts into', upsert: 'upserts', update: 'updates', delete: 'deletes from' } as const;


type WriteDesign = ActionCodeDesign['writes'][number];

/**
 * Writes of one kind to one target told once, with every place they are made (a worker whose jobs each update the
 * same log), in the order first met; the fields changed by an amount joined.
 */
function sameWrites(writes: readonly WriteDesign[]): Array<Omit<WriteDesign, 'location'> & { locations: string[] }> {
  const out: Array<Omit<WriteDesign, 'location'> & { locations: string[] }> = [];
  for (const { location, ...write } of writes) {
    const same = out.find((o) => o.kind === write.kind && o.target === write.target && o.freshKey === write.freshKey && o.unique === write.unique);
    if (!same) {
      out.push({ ...write, locations: [location] });
      continue;
    }
    same.locations.push(location);
    if (write.relative) same.relative = [...new Set([...(same.relative ?? []), ...write.relative])];
  }
  return out;
}

/** `stock`, `stock and reserved`, `a, b and c` as code spans. */
const fieldList = (fields: readonly string[]): string => {
  const spans = fields.map((f) => `\`${f}\``);
  if (spans.length === 0) return 'a counter';
  return spans.length === 1 ? spans[0]! : `${spans.slice(0, -1).join(', ')} and ${spans[spans.length - 1]}`;
};

/** One paragraph, plain text with backtick spans for code: the renderers turn the spans into code. */
export function describeFromCode(design: ActionCodeDesign, databaseLabel: string): string {
  const parts: string[] = [];
  parts.push(`The handler ${design.handlerName ? `\`${design.handlerName}\` ` : ''}at \`${design.handler}\``);
  const effects = design.calls.filter((c) => c.impact.impact !== 'harmless');
  if (design.calls.length > 0) {
    parts.push(
      ` calls ${design.calls
        .map((c) => `\`${c.call}\` (\`${c.location}\`${c.via ? `, through \`${c.via}\`` : ''}, ${c.repeatsSafely ? 'safe to repeat' : c.keyed ? (c.keyPerAttempt ? 'with an idempotency key made anew on each call, so a retried request is not recognised' : 'with an idempotency key') : 'no idempotency key'})`)
        .join(', then ')}`,
    );
  }
  if (design.writes.length > 0) {
    // Grouped by database: a Mongoose model's writes go to MongoDB whatever database holds the store.
    const databases = [...new Set(design.writes.map((w) => w.database ?? databaseLabel))];
    const written = databases.map((db) => `${sameWrites(design.writes.filter((w) => (w.database ?? databaseLabel) === db)).map((w) => `${VERB[w.kind as keyof typeof VERB] ?? w.kind} \`${w.target}\` (${w.locations.map((l) => `\`${l}\``).join(', ')}${w.relative ? `; changes ${fieldList(w.relative)} by an amount, not to a value` : ''}${w.freshKey ? `; an upsert keyed on \`${w.freshKey}\`, made fresh on each attempt, so it never conflicts` : ''}${w.unique ? `; unique on ${w.unique}` : ''})`).join(', ')} in ${db}`);
    parts.push(`${design.calls.length > 0 ? ' and' : ''} ${written.join(', and ')}`);
  }
  const messages = design.messages ?? [];
  if (messages.length > 0) {
    const sends = messages.map((m) => `${messagePhrase(m.library, m.channel)} (\`${m.location}\`${m.via ? `, through \`${m.via}\`` : ''}${m.keyed ? (m.keyPerAttempt ? ', with an idempotency key made anew on each call, so a retried request is not recognised' : ', with an idempotency key') : ''})`).join(', then ');
    parts.push(design.calls.length > 0 || design.writes.length > 0 ? `, then ${sends}` : ` ${sends}`);
  }
  const publishes = design.publishes ?? [];
  if (publishes.length > 0) {
    const events = publishes.map((p) => `publishes ${p.topic !== undefined ? `\`${p.topic}\`` : 'an event'} to ${brokerDestination(p.broker)} (\`${p.location}\`${p.via ? `, through \`${p.via}\`` : ''})`).join(', then ');
    parts.push(design.calls.length > 0 || design.writes.length > 0 || messages.length > 0 ? `, then ${events}` : ` ${events}`);
  }
  if (design.calls.length === 0 && design.writes.length === 0 && messages.length === 0 && publishes.length === 0) parts.push(' makes no provider call and no write the inspector recognises');
  parts.push('.');
  if (design.calls.length > 0 && effects.length === 0) {
    parts.push(design.calls.every((c) => c.repeatsSafely) ? ' Every provider call here sets state that a repeat leaves unchanged (an update, cancel or delete), so a duplicate costs nothing at the provider.' : ' Every provider call here is harmless to repeat (a session or link the customer may never use, or an update that sets the same state), so a duplicate costs nothing at the provider.');
  }
  return parts.join('');
}

/** What a duplicate run costs, from the worst provider operation the code performs, then from its writes. */
export function impactFromCode(design: ActionCodeDesign, trigger: string): { text: string; severity: 'financial' | 'data' | 'external' | 'notification' } {
  const impact = effectsTwice(design, trigger);
  if (!design.refusal) return impact;
  // The code's own message, as data: one line, no backticks to end the code span around it.
  const message = design.refusal.message.replace(/[`\r\n]+/g, ' ').trim().slice(0, 100);
  const repeat = trigger === 'webhook' ? 'a resend of an event already applied' : trigger === 'consumer' ? 'a redelivery of a message already handled' : 'the retry of a request whose answer was lost';
  return { ...impact, text: `${impact.text} A repeat that starts after the first run finished stops earlier, at \`${design.refusal.location}\` ("${message}"): ${repeat} gets that error instead of the first run's result. Only runs that overlap both pass that check.` };
}

function effectsTwice(design: ActionCodeDesign, trigger: string): { text: string; severity: 'financial' | 'data' | 'external' | 'notification' } {
  const worst = worstImpact(design.calls.map((c) => c.impact));
  const creates = design.writes.filter((w) => w.kind === 'create');
  const rewrites = design.writes.filter((w) => w.kind === 'upsert' || w.kind === 'update');
  const list = (items: typeof design.writes) => [...new Set(items.map((w) => w.target))].map((t) => `\`${t}\``).join(', ');
  const relative = design.writes.filter((w) => w.relative);
  const inserted = creates.length > 0 ? `inserts a second row into ${list(creates)}${creates.some((w) => w.unique) ? ' (unless a unique constraint rejects it)' : ''}` : '';
  // `$inc: { stock: n }` twice is stock + 2n: no constraint notices, and no later write puts it right.
  const applied = relative.length > 0 ? `applies ${sameWrites(relative.map((w) => ({ ...w, kind: 'update' }))).map((w) => `the change to ${fieldList(w.relative!)} of \`${w.target}\``).join(' and ')} a second time` : '';
  const rows = [inserted, applied].filter(Boolean).join(', and ');
  const subject = trigger === 'webhook' ? 'Applying the same event twice' : trigger === 'consumer' ? 'Handling the same message twice' : trigger === 'cron' ? 'Running the same slot twice' : 'A duplicate request';
  const sent = messageImpact(design.messages ?? []);
  if (worst && worst.impact !== 'harmless') {
    const call = design.calls.find((c) => c.impact === worst);
    const also = [sent?.text, rows].filter(Boolean).join(', and ');
    return { text: `${subject} ${worst.text} (\`${call?.call ?? ''}\`)${also ? `, and ${also}` : ''}.`, severity: worst.impact === 'moves-money' || worst.impact === 'bills-again' ? 'financial' : 'external' };
  }
  // Other services receive the copy: each consumer handles the event again unless it dedupes by the event's identity.
  const published = design.publishes?.[0];
  if (published && !sent) {
    const event = published.topic !== undefined ? `\`${published.topic}\`` : 'its event';
    return { text: `${subject} publishes ${event} to ${brokerDestination(published.broker)} again (\`${published.location}\`), and every consumer of it handles it twice${rows ? `; it also ${rows}` : ''}.`, severity: 'external' };
  }
  // A person receives the copy, through a provider that cannot take it back: ranked with external effects, above a
  // second row only the app sees and below money. ('notification' ranks below data: it is the guess from a name.)
  if (sent) return { text: `${subject} ${sent.text}${rows ? `, and ${rows}` : ''}.`, severity: 'external' };
  if (worst) return { text: `${subject} ${worst.text}${rows ? `; it also ${rows}` : '; nothing else changes'}.`, severity: creates.length > 0 ? 'data' : 'external' };
  if (creates.length > 0) return { text: `${subject} ${rows}: two records for one intent.`, severity: 'data' };
  if (relative.length > 0) return { text: `${subject} ${rows}: the count is off by one application, and no constraint notices.`, severity: 'data' };
  if (rewrites.length > 0) {
    return { text: `${subject} rewrites ${list(rewrites)} with the same values, harmless by itself; the risk is order: ${trigger === 'webhook' ? 'an older event resent late' : 'an older request replayed late'} overwrites newer state unless the write checks a version or timestamp.`, severity: 'data' };
  }
  const deletes = design.writes.filter((w) => w.kind === 'delete');
  if (deletes.length > 0) {
    return { text: `${subject} deletes from ${list(deletes)} again, which leaves the same state: what the first run deleted is gone already (a repeat that runs later deletes whatever matches by then).`, severity: 'data' };
  }
  // Followed, but nothing recognised: say so rather than guess from the action's name.
  return { text: `${subject} repeats whatever its handler does; no provider call that creates or moves something and no insert was recognised in its code, so what a second run costs must be read from the handler itself.`, severity: 'data' };
}

const COMPENSATING = ['del', 'delete', 'cancel', 'expire', 'voidInvoice', 'createReversal', 'refundOrCancelPayment', 'cancelAuthorisedPaymentByPspReference', 'refundCapturedPayment', 'voidPayment'];

/** The provider's own undo for an operation, only when its generated table has one; refunds undo money movements. */
export function compensationFor(call: Pick<ProviderCallFact, 'provider' | 'operation' | 'risk'>): string | undefined {
  const table = providerTables.find((t) => t.provider === call.provider);
  if (!table) return undefined;
  const has = (resource: string, method: string) => table.operations.some(([r, m]) => r === resource && m === method);
  if (call.provider === 'stripe') {
    const dot = call.operation.lastIndexOf('.');
    const resource = call.operation.slice(0, dot);
    const method = call.operation.slice(dot + 1);
    if (call.risk === 'moves-money' && /^(paymentIntents|charges)$/.test(resource) && has('refunds', 'create')) return 'stripe.refunds.create';
    if (resource === 'transfers' && method === 'create' && has('transfers', 'createReversal')) return 'stripe.transfers.createReversal';
    if (resource === 'invoices' && has('invoices', 'voidInvoice')) return 'stripe.invoices.voidInvoice';
    for (const undo of COMPENSATING) if (undo !== method && has(resource, undo)) return `stripe.${resource}.${undo}`;
    return undefined;
  }
  if (call.provider === 'adyen' && /^(payments|authorise)$/.test(call.operation) && has('checkout.ModificationsApi', 'refundOrCancelPayment')) return 'adyen refundOrCancelPayment';
  if (call.provider === 'paypal' && /capture$/.test(call.operation) && has('paymentsController', 'refundCapturedPayment')) return 'paypal v2/payments/captures/{id}/refund';
  return undefined;
}

/** `stripe.customers.create` → createCustomer; `stripe.customers.del` → deleteCustomer; `stripe.refunds.create` → createRefund. */
export function stepName(call: string): string {
  const parts = call.replace(/^\w+[. ]/, '').split(/[./]/).filter((p) => p && !p.startsWith('{') && !/^v\d+$/.test(p));
  // Adyen names operations as verbs already: `refundOrCancelPayment`, `cancelAuthorisedPaymentByPspReference`.
  if (parts.length === 1 && /^[a-z]+[A-Z]/.test(parts[0]!) && /^(refund|cancel|capture|create|update|delete|void|reverse)/.test(parts[0]!)) return parts[0]!;
  let verb = parts.length > 1 ? (parts.pop() as string) : 'create';
  if (verb === 'del') verb = 'delete';
  if (verb === 'refund' && parts.length === 0) parts.push('payment');
  const noun = parts.map((p) => objectOf(p).replace(/(^|\s)(\w)/g, (_m, _s, c: string) => c.toUpperCase())).join('');
  return verb.endsWith(noun) || noun === '' ? verb : `${verb}${noun}`;
}

/**
 * An action whose code performs two or more external effects in sequence gets steps named after the calls and the
 * provider's own compensations; "none: manual" where the provider has no undo (never an invented one).
 */
export function proposeSaga(action: { name: string; slug: string; configuredSteps: number }, facts: ActionCodeFacts): ProposedSaga | undefined {
  if (action.configuredSteps > 1) return undefined;
  const effects = facts.calls.filter((c) => !c.repeatsSafely && (c.risk === 'moves-money' || c.risk === 'billable-object'));
  if (effects.length < 2) return undefined;
  const steps = effects.map((c, i) => {
    const undo = compensationFor(c);
    return { index: i + 1, name: stepName(callName(c)), call: callName(c), location: `${c.file}:${c.line}`, ...(undo ? { compensation: stepName(undo), compensationCall: undo } : {}) };
  });
  const manual = steps.filter((s) => !s.compensation).map((s) => s.name);
  return {
    action: action.name,
    slug: action.slug,
    steps,
    note:
      `${action.name} performs ${effects.length} external effects one after another (${effects.map((c) => providerName(c.provider)).filter((v, i, a) => a.indexOf(v) === i).join(', ')}); a crash between them leaves the first done and the rest not. ` +
      'Tracking each as a step with its own sub-key lets a retry resume at the first incomplete one instead of repeating the others. ' +
      (manual.length ? `${manual.join(', ')} ${manual.length === 1 ? 'has' : 'have'} no undo in the provider's API, so a permanent failure after ${manual.length === 1 ? 'it' : 'them'} needs manual handling. ` : '') +
      'To adopt it, add these steps to the action\'s "steps" in idempotency.config.json; the generated runtime then tracks them.',
  };
}
