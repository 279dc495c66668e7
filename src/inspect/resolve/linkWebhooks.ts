import { eventIdDedupe, type SourcePiece } from '../detectors/dedupeEvidence.js';
import type { RawWebhook } from '../detectors/detectorTypes.js';
import type { WebhookFinding } from '../types.js';
import type { BuiltEndpoint } from './buildEndpoints.js';
import type { FunctionFacts } from '../parse/indexSource.js';
import type { FunctionGraph } from './functionGraph.js';
import type { ProjectRecords } from './projectRecords.js';

const PROVIDER_IN_PATH = /stripe|adyen|paypal|github|shopify|slack|twilio|svix|clerk|sendgrid|mailgun|postmark|resend|square|braintree|mollie|paddle|lemonsqueezy|razorpay/i;

/**
 * The names of verifying helpers (RawWebhook.verifierName) that the project's code never mentions again: `texts` yields
 * every source file's text, read only when such a helper exists.
 */
export function unusedVerifierNames(records: ProjectRecords, texts: () => Iterable<string>): Set<string> {
  const names = new Set([...records.files.values()].flatMap((r) => r.facts.webhooks.flatMap((w) => (w.verifierName === undefined ? [] : [w.verifierName]))));
  if (names.size === 0) return names;
  const count = new Map([...names].map((name) => [name, 0]));
  const words = new RegExp(`(?<![\\w$])(?:${[...names].map((n) => n.replace(/\$/g, '\\$')).join('|')})(?![\\w$])`, 'g');
  for (const text of texts()) for (const [word] of text.matchAll(words)) count.set(word, count.get(word)! + 1);
  // The declaration itself is one mention.
  return new Set([...count].filter(([, n]) => n <= 1).map(([name]) => name));
}

/**
 * A webhook is reported where it is received: at the route whose handler reaches the signature check, or at the
 * check itself when no route reaches it (Lambda handlers, framework-less servers). Routes named like webhooks
 * with no check at all are reported too: unverified webhooks are the riskiest kind.
 */
export function linkWebhooks(records: ProjectRecords, graph: FunctionGraph, endpoints: readonly BuiltEndpoint[], unusedVerifiers: ReadonlySet<string> = new Set()): WebhookFinding[] {
  const raw: RawWebhook[] = [...records.files.values()].flatMap((r) => r.facts.webhooks);
  const findings: WebhookFinding[] = [];
  const linked = new Set<RawWebhook>();
  const managed = managedPaths(endpoints.map((e) => e.finding));
  for (const { finding: ep, route } of endpoints) {
    // The route's own middleware counts: a `verifyStripeSignature` mounted before the handler is where the event is
    // verified (and handed on in ctx.state / req), the handler where it is applied.
    const reach = graph.reachable(route.file, [...route.handlerKeys, ...(route.guards ?? []).flatMap((g) => (g.key !== undefined && g.verdict === undefined ? [g.key] : []))]);
    const reachIds = new Set(reach.map((f) => `${f.file}::${f.key}`));
    const hits = raw.filter((w) => w.enclosingKeys.some((k) => reachIds.has(`${w.file}::${k}`)));
    const looksLikeWebhook = /webhook|\/hooks?(\/|$)|\/ipn(\/|$)/i.test(ep.path) && receivesEvents(ep.method, ep.handler) && !managed.has(ep.path);
    if (!hits.length && !looksLikeWebhook) continue;
    hits.forEach((h) => linked.add(h));
    const { evidence, perAttemptClaim } = eventIdDedupe([...reach.map((f) => piece(records, f.file, f.start, f.end)), ...hits.map((h) => piece(records, h.file, h.span[0], h.span[1]))]);
    const provider = hits.find((h) => h.provider)?.provider ?? PROVIDER_IN_PATH.exec(ep.path)?.[0].toLowerCase();
    findings.push({
      kind: 'webhook',
      id: `${provider ?? 'unknown'} webhook ${ep.id}`,
      file: ep.file,
      line: ep.line,
      ...(provider ? { provider } : {}),
      verifiesSignature: hits.length > 0,
      dedupesEventId: evidence !== undefined,
      route: ep.id,
      ...(evidence ? { dedupeEvidence: evidence } : {}),
      ...(perAttemptClaim ? { perAttemptClaim } : {}),
    });
  }
  for (const w of raw) {
    if (linked.has(w)) continue;
    // A helper that verifies and returns the event for its caller, which nothing in the project calls (a leftover):
    // no event is received there.
    if (w.verifierName !== undefined && unusedVerifiers.has(w.verifierName)) continue;
    // No route we know reaches the check (routes mounted in a loop, a route table): the request handler that calls
    // the verifying helper is where the event is received, and where its effects (an order created) are.
    const receiver = requestHandlerCalling(records, graph, w);
    const entry = receiver ? { file: receiver.file, keys: [receiver.key] } : { file: w.file, keys: w.enclosingKeys.slice(-1) };
    const { evidence, perAttemptClaim } = eventIdDedupe([piece(records, w.file, w.span[0], w.span[1]), ...graph.reachable(entry.file, entry.keys, 2).map((f) => piece(records, f.file, f.start, f.end))]);
    const at = receiver ? { file: receiver.file, line: lineAt(records.files.get(receiver.file)?.text ?? '', receiver.start) } : { file: w.file, line: w.line };
    findings.push({
      kind: 'webhook',
      id: `${w.provider ?? 'unknown'} webhook ${at.file}`,
      file: at.file,
      line: at.line,
      ...(w.provider ? { provider: w.provider } : {}),
      verifiesSignature: w.verifiesSignature,
      dedupesEventId: evidence !== undefined,
      ...(evidence ? { dedupeEvidence: evidence } : {}),
      ...(perAttemptClaim ? { perAttemptClaim } : {}),
    });
  }
  return findings;
}

/**
 * Paths that are a resource of the app's own: also updated or deleted there (`DELETE /teams/:slug/webhooks`), or with
 * items under them that are (`PUT /webhooks/:id`). Senders only ever POST events, so a POST to such a path creates a
 * webhook setting (boxyhq/saas-starter-kit's Next.js API route switching on the method) rather than receiving one.
 */
function managedPaths(endpoints: ReadonlyArray<{ method: string; path: string }>): Set<string> {
  const out = new Set<string>();
  for (const ep of endpoints) {
    if (ep.method !== 'PUT' && ep.method !== 'PATCH' && ep.method !== 'DELETE') continue;
    out.add(ep.path);
    const item = /^(.*)\/:[^/]+$/.exec(ep.path);
    if (item?.[1]) out.add(item[1]);
  }
  return out;
}

/** Handler names that manage the app's own webhook settings or send outbound calls: `createAWebhook`, `deleteWebhook`, `sendWebhook`. */
const MANAGES_WEBHOOKS = /^(create|add|new|update|edit|patch|put|delete|remove|destroy|list|get|find|fetch|show|test|send|trigger|register|save|set|toggle|enable|disable)/i;

/**
 * Whether a route named like a webhook (with no signature check found) receives events: senders POST them, and a
 * handler named for managing webhook settings (gitroomhq/postiz-app's POST/PUT/DELETE /webhooks: createAWebhook,
 * updateWebhook, deleteWebhook, and sendWebhook, which calls out) is a CRUD route of the app, not a receiver.
 */
function receivesEvents(method: string, handler: string | undefined): boolean {
  const name = handler?.slice(handler.lastIndexOf('.') + 1);
  return (method === 'POST' || method === 'ALL') && !(name !== undefined && MANAGES_WEBHOOKS.test(name));
}

/** A request handler's signature: `(req, res)`, `(request, reply)`, `(ctx)`, `(c)` (Hono), `async function (req, …)`. */
const REQUEST_HANDLER = /^(?:async\s+)?(?:function\s*[\w$]*\s*)?\(\s*(?:req|request|ctx|c)\s*[,:)]/;

/**
 * The one request handler (a function shaped like one, called by no other) that reaches the verification through
 * helpers, in another function than the check's own; undefined when none or several do (then the check stays the place).
 */
function requestHandlerCalling(records: ProjectRecords, graph: FunctionGraph, w: RawWebhook): FunctionFacts | undefined {
  const outermost = w.enclosingKeys[w.enclosingKeys.length - 1];
  if (outermost === undefined) return undefined;
  const callers = graph.callers([[w.file, outermost]]);
  // `stripe.completedCheckoutSession()` on a module the graph cannot resolve (a custom require helper) still names
  // the helper when no other file defines a function of that name.
  const all = [...records.files.values()].flatMap((r) => [...r.functions.values()]);
  for (let round = 0, grew = true; grew && round < 4; round++) {
    grew = false;
    const names = new Set([...callers].map((fn) => fn.key).filter((key) => graph.definitions(key).length === 1));
    for (const fn of all) {
      if (callers.has(fn) || ![...fn.callees].some((c) => c.includes('.') && names.has(c.slice(c.lastIndexOf('.') + 1)))) continue;
      for (const caller of graph.callers([[fn.file, fn.key]])) callers.add(caller);
      grew = true;
    }
  }
  const own = new Set(w.enclosingKeys.map((k) => records.files.get(w.file)?.functions.get(k)));
  const calledByAnother = (fn: FunctionFacts) => [...callers].some((other) => other !== fn && other.callees.has(fn.key) && graph.resolve(other.file, fn.key).includes(fn));
  const handlers = [...callers].filter((fn) => !own.has(fn) && REQUEST_HANDLER.test(graph.text(fn)) && !calledByAnother(fn));
  return handlers.length === 1 ? handlers[0] : undefined;
}

function piece(records: ProjectRecords, file: string, start: number, end: number): SourcePiece {
  const text = records.files.get(file)?.text ?? '';
  return { file, text: text.slice(start, end), line: lineAt(text, start) };
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
