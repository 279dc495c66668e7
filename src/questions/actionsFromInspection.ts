import { LIMITS } from '../config/limits.js';
import { PROVIDERS, type Provider } from '../config/schema.js';
import { libraryPhrase } from '../inspect/messageLabels.js';
import type { EndpointFinding, Inspection, PaymentFinding, WebhookFinding } from '../inspect/types.js';
import { brokerDestination, isPagesApiFile } from '../model/labels.js';
import type { ActionAnswer } from './types.js';

/** A detected action offered in the Q1 checklist, with what is still missing about it. */
export interface ActionCandidate {
  action: ActionAnswer;
  group: ActionGroup;
  /** Fields read from the handler's body/DTO type, offered when the fingerprint fields must be chosen. */
  fieldCandidates: string[];
  /** External (provider) calls the handler makes; two or more suggest saga steps. */
  externalCalls: PaymentFinding[];
  /** Pre-checked in the list; sign-in style routes are offered but not assumed critical. */
  checked: boolean;
  note?: string;
  /** The handler (or what it calls) inserts a row or document: it creates a resource. */
  insertsRecord?: boolean;
  /** Body fields left out of the fingerprint as secrets or per-attempt tokens (SECRET_FIELD). */
  secretFields?: string[];
  /** The handler (or what it calls) sends an e-mail, SMS or push notification: a duplicate reaches a person. */
  sendsMessage?: boolean;
  /** The handler answers with a stream, which the generated request wrappers cannot store whole. */
  streamsResponse?: boolean;
}

/**
 * Body fields that never define the intent: secrets (a password hashed unsalted into the store could be brute-forced
 * from the fingerprint by anyone who reads the table) and tokens made anew on every submission (a CAPTCHA answer:
 * fingerprinted, every honest retry would be a mismatch).
 */
export const SECRET_FIELD = /(^|[_-])pass$|password|passwd|passphrase|^pwd$|secret|^(cvv2?|cvc|csc|security_?code|pin|otp|totp|mfa_?code|one_?time_?code)$|captcha|recaptcha/i;

/** Checklist order: what can double-charge comes first. */
export const ACTION_GROUPS = ['Touches payments', 'Webhooks', 'Message consumers', 'Scheduled jobs', 'HTTP endpoints'] as const;
export type ActionGroup = (typeof ACTION_GROUPS)[number];

/** Last path segments of sign-in and session routes: a repeat re-authenticates, there is nothing to deduplicate. */
const AUTH_SEGMENT = /^((log-?in|log-?out|sign-?in|sign-?out)\w*|sessions?|auth|(refresh-?)?tokens?|oauth\w*)$/i;

/**
 * A sign-in, sign-out, session or token route, told by its last segment that is not a parameter (`/auth/login`,
 * `/v1/auth/refresh-tokens`, `/api/auth/:all*`, `/auth/google/callback`). Not everything under /auth: sign-up,
 * forgot-password and send-verification-email create users or send messages a second copy of may harm.
 */
export function isAuthRoute(route: string): boolean {
  const segments = route.split('/').filter((s) => s !== '' && !/^(:|\[|\{|\*)/.test(s));
  const last = segments[segments.length - 1];
  if (last === undefined) return false;
  if (AUTH_SEGMENT.test(last)) return true;
  // An OAuth provider's callback: /auth/google/callback, /oauth/github/callback.
  return /^callback$/i.test(last) && segments.some((s) => /^o?auth$/i.test(s));
}

const VERBS: Record<EndpointFinding['method'], string> = { POST: 'create', PUT: 'replace', PATCH: 'update', DELETE: 'delete', ALL: 'handle', GET: 'handle' };

/** Handler names that say nothing about the action: Next.js exports, anonymous wrappers. */
/** A method named only by what it does to some resource: the route says which (POST /orders: createOrder). */
const BARE_VERB = /^(create|update|store|save|post|put|patch|new|add|remove|delete|destroy|insert|upsert|submit|process)$/i;
const GENERIC_HANDLER = /^(GET|POST|PUT|PATCH|DELETE|handler|handle|default|index|route|main|run|execute|fn|callback|action|(default|api|route|request|main|base)Handler|handle(Request|Route))$/i;

/** First words of a route segment that name its action already: `create-checkout-session`, `send-invite`. */
const LEADING_VERB = /^(create|add|update|delete|remove|send|start|stop|generate|issue|make|submit|process|handle|sync|import|export|accept|decline|verify|invite|book|place|request|reset)$/i;

/** A last path segment that is already the operation: POST /subscriptions/:id/cancel is cancelSubscription. */
const VERB_SEGMENT = /^(cancel|refund|capture|confirm|checkout|subscribe|unsubscribe|pay|charge|approve|reject|archive|restore|publish|unpublish|resend|retry|complete|close|open|reopen|upgrade|downgrade|renew|redeem|transfer|payout|void|resume|pause|assign|unassign|upload|activate|deactivate|enable|disable|ship|fulfil|fulfill|dispatch|deliver|settle|reverse|authorize|authorise|clone|duplicate|move|release|submit|send|invite|accept|decline|verify|share|follow|unfollow|like|unlike|vote|join|leave|enroll|enrol|register|manage|reactivate|unpause|reorder)$/i;

/** Turns findings into named, grouped candidate actions; pure, so the checklist is testable without a terminal. */
export function actionsFromInspection(inspection: Inspection): ActionCandidate[] {
  const payments = inspection.findings.filter((f): f is PaymentFinding => f.kind === 'payment');
  const webhooks = inspection.findings.filter((f): f is WebhookFinding => f.kind === 'webhook');
  const candidates: ActionCandidate[] = [];

  for (const finding of inspection.findings) {
    if (finding.kind === 'endpoint') {
      if (webhooks.some((hook) => sameHandler(hook, finding))) continue;
      const calls = callsIn(payments, finding.file, finding.handler);
      const provider = providerOf(calls, finding.touchesPayment ? inspection.stack.payments : []);
      // The target resource's id is part of the intent: PATCH /orders/:id with the same body on another order differs.
      const found = [...new Set([...routeParams(finding.path), ...(finding.bodyFields ?? [])])];
      // Secrets and per-attempt tokens are not the intent: see SECRET_FIELD.
      const fields = found.filter((field) => !SECRET_FIELD.test(field));
      const secretFields = found.filter((field) => SECRET_FIELD.test(field));
      const notified = notificationKey(finding, fields);
      const prefixNote = finding.prefixResolved || finding.transport !== undefined ? existingNote(inspection, finding) : 'mount prefix not resolved; check the route';
      candidates.push({
        action: withoutUndefined({
          name: actionName(finding, calls),
          trigger: 'http',
          route: `${finding.method === 'ALL' ? 'POST' : finding.method} ${finding.path}`,
          // A GraphQL mutation, tRPC procedure or Server Action: the route names it, no request goes to that path.
          transport: finding.transport,
          significantFields: notified?.significant ?? fields,
          provider,
          source: `${finding.file}:${finding.line}`,
          ...(notified ? { scope: 'global' as const, key: { source: 'derived' as const, from: notified.key } } : {}),
        }),
        group: notified ? 'Webhooks' : finding.touchesPayment || calls.length > 0 ? 'Touches payments' : 'HTTP endpoints',
        fieldCandidates: fields,
        externalCalls: calls,
        ...(notified ? { checked: true, note: join(notified.note, prefixNote) } : preselection(finding, calls.length > 0 || Boolean(finding.touchesPayment), prefixNote)),
        ...(finding.insertsRecord ? { insertsRecord: true } : {}),
        ...(secretFields.length > 0 ? { secretFields } : {}),
        ...(finding.sendsMessage?.length ? { sendsMessage: true } : {}),
        ...(finding.streamsResponse ? { streamsResponse: true } : {}),
      });
    } else if (finding.kind === 'webhook') {
      const provider = asProvider(finding.provider);
      const route = finding.route ? (/^[A-Z]+ /.test(finding.route) ? finding.route : `POST ${finding.route}`) : undefined;
      candidates.push({
        action: withoutUndefined({
          name: `handle${pascal(finding.provider ?? nameFromPath(route ?? 'incoming')).replace(/Webhooks?$/, '')}Webhook`,
          trigger: 'webhook',
          route,
          // Providers resend the same event: its id is the natural key and the type tells events apart. Adyen has no
          // event id: a notification item is one pspReference + eventCode.
          significantFields: provider === 'adyen' ? ['pspReference', 'eventCode'] : ['id', 'type'],
          provider,
          source: `${finding.file}:${finding.line}`,
          key: { source: 'derived', from: provider === 'adyen' ? ['pspReference', 'eventCode'] : ['id'] },
        }),
        group: 'Webhooks',
        fieldCandidates: [],
        externalCalls: [],
        checked: true,
        note: finding.dedupesEventId ? 'already dedupes event ids' : undefined,
      });
    } else if (finding.kind === 'consumer') {
      const topic = finding.queue ?? finding.broker;
      // One consumer of many topics (`subscribe({ topics: [...] })`) is named for its file or class, not their list.
      const several = topic.includes(',');
      const subject = several ? nameFromPath(finding.file).replace(/[-_.]?consumer$/i, '') || topic.split(',')[0]! : topic;
      candidates.push({
        action: withoutUndefined({ name: `consume${pascal(subject)}`, trigger: 'consumer', route: finding.queue === undefined ? undefined : topicList(finding.queue), significantFields: [], source: `${finding.file}:${finding.line}` }),
        group: 'Message consumers',
        fieldCandidates: [],
        externalCalls: [],
        checked: true,
        note: finding.dedupes ? 'already dedupes' : undefined,
      });
    } else if (finding.kind === 'cron') {
      candidates.push({
        action: withoutUndefined({
          name: finding.name && isIdentifier(finding.name) ? finding.name : `run${pascal(finding.name ?? nameFromPath(finding.file))}Job`,
          trigger: 'cron',
          route: finding.schedule,
          // One run per scheduled slot: the slot is both the key and the whole intent.
          significantFields: ['scheduledFor'],
          source: `${finding.file}:${finding.line}`,
          key: { source: 'derived', from: ['scheduledFor'] },
        }),
        group: 'Scheduled jobs',
        fieldCandidates: [],
        externalCalls: [],
        // A job that only logs repeats nothing when two runs overlap: offered, not assumed worth a key. A timer
        // named for a heartbeat or telemetry runs in every process on purpose: one run per slot would silence all but
        // one instance.
        checked: !finding.inert && !perProcessTick(finding),
        ...(finding.inert
          ? { note: 'its callback only logs: a second run of a slot changes nothing' }
          : perProcessTick(finding)
            ? { note: 'a heartbeat or telemetry timer each process runs for itself: one run per slot across instances would silence the others' }
            : {}),
      });
    }
  }
  // A name the config takes: a long path or topic still makes one of at most LIMITS.nameLength characters.
  // (Room is left for the digit uniqueNames may add.)
  for (const candidate of candidates) candidate.action.name = candidate.action.name.slice(0, LIMITS.nameLength - 4);
  return order(uniqueNames(candidates));
}

/** A path segment of a route other systems post events to. */
const HOOK_SEGMENT = /^(web-?hooks?|ipn)$/i;
/** A last path segment that names a receiver of notifications, when the route is about payments or orders. */
const RECEIVER_SEGMENT = /^(receiver|receive|notify|notification|callback|hook)$/i;
const PAYMENT_WORDS = /pay|order|transaction|checkout|billing|invoice|subscription|charge|transfer/i;
/** Body fields of a webhook's registration (`POST /webhooks` that subscribes a URL), not of an event it receives. */
const REGISTRATION_FIELD = /^(url|endpoint|(webhook|target|callback)_?url|events|event_?types|secret)$/i;
/** Handlers of a webhook's registration: the resource is the webhook itself. */
const REGISTRATION_HANDLER = /^(create|add|update|edit|delete|remove|register|save|list|get|find|test|enable|disable)/i;
/** The event's own id in a notification body, most specific first. */
const EVENT_ID: readonly RegExp[] = [/^(event|notification|webhook|message)_?id$/i, /^id$/i, /^(transaction|txn|payment)_?id$/i, /^reference(_?(code|number|id))?$/i];
const EVENT_TYPE = /^(type|event|event_?type|transfer_?type|status)$/i;

/**
 * A route another system calls to report an event: a payment gateway's notification receiver (`POST
 * /payment/receiver`, an IPN), a webhook whose signature check inspection did not recognise. Its sender sends no
 * Idempotency-Key header and is no signed-in user, so a header-keyed, user-scoped route would refuse every delivery;
 * it is keyed as a webhook is, by the event's own id, across all callers. Undefined for any other route.
 */
function notificationKey(endpoint: EndpointFinding, fields: readonly string[]): { key: string[]; significant: string[]; note: string } | undefined {
  if (endpoint.method !== 'POST' || endpoint.transport !== undefined) return undefined;
  const segments = endpoint.path.split('/').filter((part) => part !== '' && !/^[:{[*]/.test(part));
  const method = endpoint.handler?.split('.').pop() ?? '';
  const hook = segments.some((part) => HOOK_SEGMENT.test(part)) && !REGISTRATION_HANDLER.test(method) && !fields.some((field) => REGISTRATION_FIELD.test(field));
  const last = segments[segments.length - 1] ?? '';
  const receiver = RECEIVER_SEGMENT.test(last) && (Boolean(endpoint.touchesPayment) || PAYMENT_WORDS.test(`${segments.join('/')} ${endpoint.handler ?? ''}`));
  if (!hook && !receiver) return undefined;
  const sender = 'called by another system to report an event (its signature check, if any, was not recognised): it sends no Idempotency-Key and is no signed-in user';
  const id = EVENT_ID.map((pattern) => fields.find((field) => pattern.test(field))).find((field) => field !== undefined);
  if (id) {
    // With the type or status beside it in the key: where `id` names the resource rather than the event (one order,
    // `paid` then `shipped`), each event is its own key instead of a mismatch the sender would resend forever.
    const type = fields.find((field) => field !== id && EVENT_TYPE.test(field));
    const key = type ? [id, type] : [id];
    return { key, significant: key, note: `${sender}, so the key is the event's ${key.map((field) => `\`${field}\``).join(' and ')}, shared by every caller` };
  }
  if (fields.length > 0) return { key: fields.slice(0, LIMITS.keyFields), significant: [...fields], note: `${sender}; no event id among its body fields, so the key is the whole body: name the sender's event id in key.from` };
  return { key: ['id'], significant: ['id'], note: `${sender}; its body was not read, so the key assumes an \`id\` field: name the sender's event id in key.from` };
}

/** An in-process timer whose name or interval says it reports on this process: a heartbeat, telemetry, a health ping. */
function perProcessTick(finding: Extract<Inspection['findings'][number], { kind: 'cron' }>): boolean {
  return finding.scheduler === 'setInterval' && /heart-?beat|telemetry|keep-?alive|health-?check|\bping\b|metrics?\b/i.test(`${finding.name ?? ''} ${finding.schedule ?? ''}`.replace(/_/g, ' '));
}

function order(candidates: ActionCandidate[]): ActionCandidate[] {
  return candidates
    .map((candidate, index) => ({ candidate, index }))
    .sort((a, b) => ACTION_GROUPS.indexOf(a.candidate.group) - ACTION_GROUPS.indexOf(b.candidate.group) || a.index - b.index)
    .map(({ candidate }) => candidate);
}

/**
 * One name per action. Actions that would share one and live in different folders (`consumeOrderCancelled` in
 * src/NotificationService/… and in src/PaymentService/…, two services of one repository) are told apart by the first
 * folder where their paths part: consumeOrderCancelledNotificationService, consumeOrderCancelledPaymentService.
 * Otherwise (one folder, or folders that do not part once for all) the second gets a 2, the third a 3.
 */
function uniqueNames(candidates: ActionCandidate[]): ActionCandidate[] {
  const groups = new Map<string, ActionCandidate[]>();
  for (const candidate of candidates) groups.set(candidate.action.name, [...(groups.get(candidate.action.name) ?? []), candidate]);
  for (const [name, group] of groups) {
    if (group.length < 2) continue;
    const folders = group.map((c) => (c.action.source ?? '').replace(/:\d+$/, '').split('/').slice(0, -1));
    const depth = Math.min(...folders.map((f) => f.length));
    let index = 0;
    while (index < depth && folders.every((f) => f[index] === folders[0]![index])) index += 1;
    const parts = index < depth ? folders.map((f) => pascal(f[index]!)) : [];
    const taken = new Set(candidates.filter((c) => !group.includes(c)).map((c) => c.action.name));
    const named = parts.map((part) => `${name}${part}`);
    if (parts.length === group.length && parts.every((p) => /^[A-Z]\w*$/.test(p)) && new Set(named).size === group.length && !named.some((n) => taken.has(n))) {
      group.forEach((candidate, i) => (candidate.action.name = named[i]!));
    } else {
      group.forEach((candidate, i) => (candidate.action.name = i === 0 ? name : `${name}${i + 1}`));
    }
  }
  return candidates;
}

function sameHandler(hook: WebhookFinding, endpoint: EndpointFinding): boolean {
  if (hook.file === endpoint.file && hook.line === endpoint.line) return true;
  const hookPath = hook.route?.replace(/^[A-Z]+\s+/, '');
  return hookPath !== undefined && hookPath === endpoint.path;
}

function callsIn(payments: PaymentFinding[], file: string, handler: string | undefined): PaymentFinding[] {
  if (!handler) return [];
  return payments.filter((p) => p.enclosingFunction === handler && p.file === file);
}

function providerOf(calls: PaymentFinding[], stackPayments: readonly string[]): Provider | undefined {
  const fromCalls = [...new Set(calls.map((c) => c.provider))];
  if (fromCalls.length === 1) return asProvider(fromCalls[0]);
  // Linked through a service the inspector followed: only unambiguous when the project uses one provider.
  if (fromCalls.length === 0 && stackPayments.length === 1) return asProvider(stackPayments[0]);
  return undefined;
}

function asProvider(name: string | undefined): Provider | undefined {
  return PROVIDERS.find((p) => p === name);
}

/** The handler's own name when it means something, else the provider operation it performs, else the route. */
function actionName(endpoint: EndpointFinding, calls: readonly PaymentFinding[]): string {
  // A tRPC procedure is named by its path, namespace last: `post.create` is createPost, `post.delete` deletePost.
  if (endpoint.transport === 'trpc') {
    const named = procedureName(endpoint.path);
    if (named) return named;
  }
  // A bare verb (`router.post('/users', create)`) says nothing the route does not: the route names it (createUser).
  if (endpoint.handler && isIdentifier(endpoint.handler) && !GENERIC_HANDLER.test(endpoint.handler) && !BARE_VERB.test(endpoint.handler)) return endpoint.handler;
  // A controller method (`PayPalController.createCheckout`) names the action unless it is a bare CRUD verb.
  const method = endpoint.handler?.split('.').pop();
  if (method && endpoint.handler?.includes('.') && isIdentifier(method) && !GENERIC_HANDLER.test(method) && !BARE_VERB.test(method)) return method;
  const operations = [...new Set(calls.map((c) => c.operation))];
  if (operations.length === 1 && operations[0]) return nameFromOperation(operations[0]);
  // An inline handler that hands the request to one service method is named after it (`modifyPayment`), unless
  // the method is a bare verb or a generic name.
  if (endpoint.delegate && isIdentifier(endpoint.delegate) && !GENERIC_HANDLER.test(endpoint.delegate) && !BARE_VERB.test(endpoint.delegate)) return endpoint.delegate;
  return nameFromRoute(endpoint.method, endpoint.path);
}

/** `/post.create` → createPost, `/billing.invoices.void` → voidBillingInvoice, `/createPost` → createPost. */
function procedureName(path: string): string | undefined {
  const parts = path.replace(/^\//, '').split('.').filter(Boolean);
  const last = parts.pop();
  if (!last || !/^[A-Za-z]\w*$/.test(last)) return undefined;
  if (parts.length === 0 || !(BARE_VERB.test(last) || VERB_SEGMENT.test(last))) return last;
  return `${last}${parts.map((p) => pascal(singular(p))).join('')}`;
}

/**
 * What a GraphQL mutation, tRPC procedure or Server Action does to its resource, told by its name as an HTTP method
 * would tell it (they all arrive as POST): `deletePost`, `post.remove` act like DELETE, `setStatus`, `post.upsert`
 * like PUT. Undefined when the name says nothing of the kind.
 */
export function rpcMethod(route: string | undefined, transport: string | undefined): 'DELETE' | 'PUT' | undefined {
  if (transport === undefined || route === undefined) return undefined;
  const name = route.replace(/^[A-Z]+ /, '').split(/[/.#]/).filter(Boolean).pop() ?? '';
  const verb = /^[a-z]+/.exec(name)?.[0] ?? name.toLowerCase();
  if (/^(delete|remove|destroy|unlink|unassign|unfollow|unlike)$/.test(verb)) return 'DELETE';
  if (/^(set|replace|put|upsert)$/.test(verb)) return 'PUT';
  return undefined;
}

/** `checkout.sessions.create` → createCheckoutSession, `refunds.create` → createRefund, `paymentIntents.capture` → capturePaymentIntent. */
export function nameFromOperation(operation: string): string {
  const parts = operation.split(/[./]/).filter((p) => p && !p.startsWith('{') && !/^v\d+$/.test(p));
  const verb = parts.length > 1 ? (parts.pop() as string) : 'create';
  return `${verb}${parts.map((p) => pascal(singular(p))).join('')}`;
}

export function nameFromRoute(method: EndpointFinding['method'], route: string): string {
  const segments = route.split('/').filter((segment) => segment !== '' && !segment.startsWith(':') && !segment.startsWith('{') && !segment.startsWith('['));
  const last = segments.pop();
  if (last && VERB_SEGMENT.test(last)) return `${last.toLowerCase()}${pascal(singular(segments.filter((s) => s !== 'api').pop() ?? ''))}`;
  // A segment that already says what it does (`create-checkout-session`, `send_invite`) is the name as it stands.
  // camelCase too: `/handleShopperRedirect` is handleShopperRedirect, not handleHandleShopperRedirect.
  const [firstWord, ...rest] = (last ?? '').replace(/([a-z0-9])([A-Z])/g, '$1-$2').split(/[^A-Za-z0-9]+/).filter(Boolean);
  if (firstWord && rest.length > 0 && (LEADING_VERB.test(firstWord) || VERB_SEGMENT.test(firstWord))) return `${firstWord.toLowerCase()}${pascal(rest.join('-'))}`;
  // One request acts on one resource: POST /orders creates an order.
  return `${VERBS[method]}${pascal(singular(last ?? 'root'))}`;
}

function singular(word: string): string {
  if (/ies$/i.test(word)) return word.slice(0, -3) + 'y';
  if (/(ss|us|is)$/i.test(word)) return word;
  if (/(ches|shes|xes|sses)$/i.test(word)) return word.slice(0, -2);
  return word.replace(/([^s])s$/, '$1');
}

/**
 * Things a second copy of harms even without a provider: money-like records, orders, messages sent to people. Routes
 * are often named in the team's language: the same words in Spanish, Portuguese, French, German and Italian too
 * (`POST /api/v1/pedido`, `/commandes`, `/bestellungen`).
 */
const HARMFUL_DUPLICATE = /(order|checkout|payment|invoice|charge|refund|payout|transfer|withdraw|deposit|booking|reservation|ticket|shipment|subscription|purchase|donation|transaction|ledger|credit|voucher|coupon|redeem|sms|notif|invit|message|send|pedido|compra|pago|pagamento|factura|fatura|reserva|reembolso|transferencia|commande|paiement|facture|achat|remboursement|bestellung|zahlung|rechnung|buchung|ordine|fattura|prenotazione|rimborso)/i;

/**
 * Words that name something about a record, not the record: `POST /api/paymentMethods` lists the methods a shopper may
 * pay with (Adyen's examples), `/order-status` or `/checkout/preview` compute; none creates a payment or an order.
 */
const NOT_A_RECORD = /(payment|order|checkout|booking|subscription|shipment|transaction)[-_]?(methods?|status(es)?|history|summary|preview|quotes?|estimates?|options?|types?|settings?)/gi;

/**
 * A camelCase name without its qualifying tail: what `generateTitleFromUserMessage` creates is a title, not a message
 * (`createOrderFromCart` still creates an order).
 */
function withoutQualifiers(name: string): string {
  return name.replace(/(?<=[a-z0-9])(From|By|For|With|Of|Using|Via)[A-Z][A-Za-z0-9]*/g, '');
}

/**
 * Pre-checked only where a duplicate costs something outside this request (money, a provider object) or creates
 * something a second copy of harms (an order, a booking, a message to a person). Other plain POST/PATCH routes that
 * only write to the app's own database are shown unchecked with that reason; sign-in routes and naturally idempotent
 * methods too.
 */
function preselection(endpoint: EndpointFinding, external: boolean, note: string | undefined): { checked: boolean; note?: string } {
  // A GET is followed from links and redirects (an OAuth callback, a payment's return URL): browsers, prefetchers and
  // crawlers repeat it and none sends an Idempotency-Key, so a header-keyed GET would answer 400 to every visit.
  // `app.all(…)` answers GET too (a provider's redirect back to the shop, as in Adyen's examples); a Next.js Pages API
  // route is ALL only because it does not check its method, and its callers are the app's own fetches.
  const everyMethod = endpoint.method === 'ALL' && !isPagesApiFile(endpoint.file);
  if (endpoint.method === 'GET' || everyMethod) {
    const effect = external ? 'reaches a payment provider' : endpoint.sendsMessage?.length ? 'sends a message' : 'changes data';
    const what = everyMethod ? 'a route for every method, GET included,' : 'a GET';
    return { checked: false, note: join(`${what} that ${effect}: its GET callers (links, redirects) cannot send an Idempotency-Key; key it by a value that names the attempt (an OAuth state, a checkout session id, a redirect result) or move the effect behind a POST`, note) };
  }
  // The request wrappers store an answer whole before sending it: a streamed one (a chat reply) would arrive all at once.
  if (endpoint.streamsResponse) return { checked: false, note: join('answers with a stream, which a stored response cannot reproduce: guard what it does inside (idempotency.core.runOnce) rather than the route', note) };
  if (external) return { checked: true, note: join('external or money effect: a duplicate repeats the provider call', note) };
  // Before the sign-in and method checks: a magic-link sign-in or a PUT that e-mails someone still e-mails twice.
  if (endpoint.sendsMessage?.length) return { checked: true, note: join(`${endpoint.sendsMessage.map(libraryPhrase).join(' and ')}: a duplicate would reach a person twice`, note) };
  if (isAuthRoute(endpoint.path)) return { checked: false, note: join('sign-in/session route: a repeat re-authenticates, nothing to deduplicate', note) };
  // An event other services consume: a second copy is handled again wherever it goes (a consumer keyed by its offset
  // or delivery cannot tell it from a new event).
  if (endpoint.publishes?.length && endpoint.method !== 'DELETE' && endpoint.method !== 'PUT') return { checked: true, note: join(`publishes to ${endpoint.publishes.map(brokerDestination).join(' and ')}: a duplicate publishes the event again, and its consumers handle it twice`, note) };
  if (endpoint.method === 'DELETE' || endpoint.method === 'PUT') return { checked: false, note: join(`${endpoint.method} is idempotent by nature: a repeat leaves the same state`, note) };
  const rpc = rpcMethod(endpoint.path, endpoint.transport);
  if (rpc) return { checked: false, note: join(`${rpc === 'DELETE' ? 'deletes' : 'sets'} by its name, as ${rpc} would: a repeat leaves the same state`, note) };
  const harmful = HARMFUL_DUPLICATE.exec(`${withoutQualifiers(endpoint.path)} ${withoutQualifiers(endpoint.handler ?? '')}`.replace(NOT_A_RECORD, ''));
  if (harmful) return { checked: true, note: join(`creates ${/sms|notif|invit|message|send/i.test(harmful[1]!) ? 'a message to a person' : `a record (${harmful[1]!.toLowerCase()})`} a duplicate would harm`, note) };
  return { checked: false, note: join('no external or money effect found in its code: check it if a second copy would harm', note) };
}

function join(reason: string, note: string | undefined): string {
  return note ? `${reason}; ${note}` : reason;
}

/** Protection already in the handler: an existing-idempotency finding between this route and the next one in its file. */
function existingNote(inspection: Inspection, endpoint: EndpointFinding): string | undefined {
  const next = Math.min(
    ...inspection.findings.filter((f) => f.kind === 'endpoint' && f.file === endpoint.file && f.line > endpoint.line).map((f) => f.line),
  );
  const found = inspection.findings.find((f) => f.kind === 'existing-idempotency' && f.file === endpoint.file && f.line >= endpoint.line && f.line < next);
  return found?.kind === 'existing-idempotency' ? `already: ${found.detail}` : undefined;
}

function routeParams(route: string): string[] {
  return route
    .split('/')
    .flatMap((segment) => /^:(\w+)\??$/.exec(segment)?.[1] ?? /^\{(\w+)\}$/.exec(segment)?.[1] ?? /^\[(\w+)\]$/.exec(segment)?.[1] ?? []);
}

/** The topics a consumer reads, as the config can hold them: `a,b,c` whole, or the first ones and how many more. */
function topicList(queue: string): string {
  if (queue.length <= LIMITS.textLength) return queue;
  const topics = queue.split(',');
  let shown = topics.length;
  const text = (n: number) => `${topics.slice(0, n).join(',')} and ${topics.length - n} more`;
  while (shown > 1 && text(shown).length > LIMITS.textLength) shown -= 1;
  return text(shown).slice(0, LIMITS.textLength);
}

function nameFromPath(text: string): string {
  return text.split(/[\\/]/).pop()?.replace(/\.[a-z]+$/i, '') ?? text;
}

function pascal(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]?.toUpperCase() + word.slice(1))
    .join('');
}

function isIdentifier(text: string): boolean {
  return /^[A-Za-z_$][\w$]*$/.test(text);
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
