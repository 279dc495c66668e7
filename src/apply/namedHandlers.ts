import path from 'node:path';
import { readInside } from '../emit/safePath.js';
import { findByNamePath, followReference, handlerReference, insideProject, loadProject, MAX_HOPS, namePath, usesOf, type Followed, type Handler } from './followHandler.js';
import { importStyleFor, type ProjectImports } from './importStyle.js';
import { locateRoute, isWired, routeCalls } from './locateRoute.js';
import { principalPathIn } from './principalPath.js';
import { parseSource } from './sourceFile.js';
import type { TransformContext } from './transforms/context.js';
import { honoPrincipal } from './transforms/honoRoute.js';
import { koaPrincipal } from './transforms/koaRoute.js';
import { keyStripeCalls } from './transforms/stripeKey.js';
import { verifiedWebhookProvider, WEBHOOK_EVENT_MODULE, WEBHOOK_FRAMEWORKS, wrapVerifiedHandler, type WebhookFramework } from './transforms/webhook.js';
import type { Edit, ManualStep, WiringTarget } from './types.js';
import { projectFiles } from './projectScan.js';

/** The frameworks whose routes take the handler as their last argument (or Fastify's `handler:` option). */
export const NAMED_HANDLER_FRAMEWORKS = new Set(['express', 'fastify', 'koa', 'hono']);

export interface NamedHandlerInput {
  root: string;
  framework: string;
  /** The HTTP and webhook targets apply wired, with the text each file had before and has after the route pass. */
  targets: readonly WiringTarget[];
  texts: ReadonlyMap<string, { before: string; after: string }>;
  /** Whether the file is byte-for-byte what the last apply wrote (its recorded line may have moved). */
  anyLine: (file: string) => boolean;
  scaffoldDir: string;
  imports: ProjectImports;
  scaffoldModules: ReadonlySet<string>;
  /** Where the project's middleware leaves a verified Stripe event (TransformContext.verifiedEvents). */
  verifiedEvents?: ReadonlySet<string>;
}

export interface NamedHandlerOutcome {
  /** Files whose text changed, with their new text (a file the route pass changed already is built upon). */
  texts: Map<string, string>;
  edits: Edit[];
  manual: ManualStep[];
  /** Actions whose followed handler reads the caller's id (`req.user.id`, `ctx.state.user.id`, `c.get('user').id`), and that path. */
  principals: Map<string, string[]>;
  /** Webhook actions whose handler this pass followed: the route pass's step saying it could not is superseded. */
  webhooks: Set<string>;
}

/** How the followed handler reads the caller's id, in the framework's idiom (the path the instance's principal reads). */
function principalOf(framework: string, fn: Handler): string[] | undefined {
  if (framework === 'koa') return koaPrincipal(fn);
  if (framework === 'hono') return honoPrincipal(fn);
  return principalPathIn(fn, framework === 'express');
}

/** Why a followed name ends nowhere apply can edit, for the route's manual step. */
function notFollowed(kind: Exclude<Followed['kind'], 'function'>, name: string, webhook: boolean): string {
  const todo = webhook ? `wrap its event handling after the signature check in onceForEvent() (${WEBHOOK_EVENT_MODULE}.ts) by hand` : 'key its provider calls with stripeRequestOptions(idempotencyOf(req)) by hand';
  if (kind === 'unresolved') return `the route passes its handler by name (${name}) and its declaration is not among the project's own files (a dependency, or a file outside the project or behind a link out of it); apply edits only your own files: ${todo}`;
  if (kind === 'outside') return `the handler ${name} is declared outside the project (a dependency or a link out of it), or re-exported through a file there; apply edits only your own files: ${todo}`;
  if (kind === 'too-far') return `the route passes its handler by name (${name}) through more than ${MAX_HOPS} imports and re-exports; apply stops following there: ${todo}`;
  return `the route passes its handler by name (${name}) and apply cannot follow it to one function it can edit (wrapped, re-assigned or declared several times): ${todo}`;
}

interface Resolved {
  target: WiringTarget;
  file: string;
  names: string[];
  /** Uses of the function other than this route's own reference: a second route, a test, another caller. */
  others: Array<{ file: string; line: number }>;
  reference: string;
}

/** A webhook route apply can wrap the handler of (the verified-webhook transform's frameworks and providers). */
const wrapsWebhook = (framework: string, target: WiringTarget) => target.trigger === 'webhook' && WEBHOOK_FRAMEWORKS.has(framework) && verifiedWebhookProvider(target.provider) !== undefined;

/**
 * Routes that pass their handler by name (`router.post('/pay', createPayment)`, `app.post('/pay', auth,
 * controller.pay)`, `app.post('/webhooks/stripe', express.raw(...), stripeWebhook)`): the handler is followed to its
 * declaration, in the same file or a project file it imports (also through an index's re-exports and default
 * exports), and gets what an inline handler gets: its provider calls the derived keys, reading the claim from the
 * handler's own first parameter; a verified webhook's event handling the onceForEvent dedupe. A function more than
 * one place uses is left as a manual step: keyed from one route's claim it would throw (or send another action's
 * key) when called from the other.
 */
export async function keyNamedHandlers(input: NamedHandlerInput): Promise<NamedHandlerOutcome> {
  const out: NamedHandlerOutcome = { texts: new Map(), edits: [], manual: [], principals: new Map(), webhooks: new Set() };
  if (!NAMED_HANDLER_FRAMEWORKS.has(input.framework)) return out;
  const candidates = input.targets.filter((t) => (t.trigger === 'http' || wrapsWebhook(input.framework, t)) && input.texts.has(t.file));
  // Cheap first look on the route files alone: most apps pass inline handlers, and then no program is loaded.
  const named = candidates.filter((target) => {
    const sf = parseSource(target.file, input.texts.get(target.file)!.before, { quote: 'single', semicolons: true });
    const located = locateRoute(sf, target, input.anyLine(target.file));
    return located.kind === 'found' && handlerReference(located.call, input.framework) !== undefined;
  });
  if (named.length === 0) return out;

  // The inspection's walk: confined to the root, a symlink out of it is never followed.
  const { files } = await projectFiles(input.root);
  const project = loadProject(input.root, files.map((f) => f.rel));
  const resolved: Resolved[] = [];
  for (const target of named) {
    const webhook = target.trigger === 'webhook';
    const sf = project.getSourceFile(path.join(input.root, target.file));
    if (!sf) continue;
    const located = locateRoute(sf, target, input.anyLine(target.file));
    if (located.kind !== 'found') continue;
    // Only a route the route pass left wired: its middleware is what puts the claim on the request. A webhook has
    // none (it is keyed by the provider's event id inside the handler).
    const occurrence = located.occurrence ?? routeCalls(sf, target).indexOf(located.call);
    const after = parseSource(target.file, input.texts.get(target.file)!.after, { quote: 'single', semicolons: true });
    const wired = routeCalls(after, target)[occurrence];
    if (!wired || (!webhook && !isWired(wired, target.codeName))) continue;
    if (webhook) out.webhooks.add(target.action);
    const reference = handlerReference(located.call, input.framework)!;
    const line = located.call.getStartLineNumber();
    const name = reference.getText();
    const followed = followReference(input.root, reference);
    if (followed.kind !== 'function') {
      out.manual.push({ action: target.action, file: target.file, line, reason: notFollowed(followed.kind, name, webhook) });
      continue;
    }
    const uses = usesOf(followed.definition, followed.links);
    if (!uses) {
      out.manual.push({ action: target.action, file: target.file, line, reason: `the route passes its handler by name (${name}) and apply cannot tell who else calls it; ${webhook ? 'wrap its event handling in onceForEvent()' : 'key its provider calls with stripeRequestOptions(idempotencyOf(req))'} by hand` });
      continue;
    }
    const others = uses.filter((ref) => !(ref.getSourceFile() === sf && ref.getStart() === reference.getStart())).map((ref) => ({ file: insideProject(input.root, ref.getSourceFile().getFilePath()) ?? ref.getSourceFile().getBaseName(), line: ref.getStartLineNumber() }));
    resolved.push({ target, file: followed.file, names: namePath(followed.fn), others, reference: name });
    // As for an inline handler: how it reads the caller's id is what the instance's principal reads.
    const principal = webhook ? undefined : principalOf(input.framework, followed.fn);
    if (principal) out.principals.set(target.action, principal);
  }

  for (const item of resolved) {
    const { target } = item;
    const webhook = target.trigger === 'webhook';
    if (item.others.length > 0) {
      const where = item.others.map((o) => `${o.file}:${o.line}`).join(', ');
      out.manual.push({
        action: target.action,
        file: item.file,
        reason: webhook
          ? `the webhook handler ${item.reference} is also used at ${where}: deduplicated as this action's events it would claim the other route's events under this action. Give each route its own handler, or wrap the event handling in onceForEvent() by hand`
          : `the handler ${item.reference} is also used at ${where}: keyed from this route's claim it would fail (or send this action's key) there. Give each route its own handler, or pass idempotencyOf(req) into a shared function and add stripeRequestOptions(context) to its provider calls by hand`,
      });
      continue;
    }
    const current = out.texts.get(item.file) ?? input.texts.get(item.file)?.after ?? (await readInside(input.root, item.file));
    if (current === undefined) continue;
    const style = importStyleFor(item.file, current, input.scaffoldDir, input.imports);
    const sf = parseSource(item.file, current, style);
    const handler = findByNamePath(sf, item.names);
    if (!handler) {
      out.manual.push({ action: target.action, file: item.file, reason: `the handler ${item.reference} of ${target.method ?? 'POST'} ${target.path ?? ''} could not be found again in ${item.file} after the other edits (its name is declared more than once there); ${webhook ? 'wrap its event handling in onceForEvent()' : 'key its provider calls with stripeRequestOptions(idempotencyOf(req))'} by hand` });
      continue;
    }
    const context: TransformContext = { style, anyLine: true, scaffoldModules: input.scaffoldModules, ...(input.verifiedEvents ? { verifiedEvents: input.verifiedEvents } : {}) };
    const here = { ...target, file: item.file, line: handler.getStartLineNumber() };
    if (webhook) {
      const provider = verifiedWebhookProvider(target.provider)!;
      const wrapped = wrapVerifiedHandler(sf, handler, here, input.framework as WebhookFramework, provider, context, here.line);
      if (!wrapped) {
        // A webhook whose provider is not configured (MercadoPago, a homegrown sender) is not a Stripe one that lacks its check.
        const missing = target.provider === undefined
          ? `comes from a provider apply knows no signature check for (it reads ${provider.label}'s ${provider.check} and those of the configured providers); verify the sender's signature first, then`
          : `has no ${provider.label} signature check apply recognises in its own body (${provider.check}, its result assigned to a variable, outside any try block that also holds the handling); after your check,`;
        out.manual.push({ action: target.action, file: item.file, line: here.line, reason: `the webhook handler ${item.reference} of ${target.method ?? 'POST'} ${target.path ?? ''} ${missing} wrap the event handling in onceForEvent() from ${WEBHOOK_EVENT_MODULE}.ts by hand` });
        continue;
      }
      out.manual.push(...wrapped.manual);
      if (wrapped.edits.length > 0) out.edits.push({ action: target.action, file: item.file, summary: `follows the webhook handler ${item.reference} of ${target.method ?? 'POST'} ${target.path ?? ''} to ${item.file}` }, ...wrapped.edits);
    } else {
      const keyed = keyStripeCalls(sf, handler, here, context);
      out.manual.push(...keyed.manual);
      if (keyed.edits.length > 0) {
        out.edits.push({ action: target.action, file: item.file, summary: `follows the handler ${item.reference} of ${target.method ?? 'POST'} ${target.path ?? ''} to ${item.file}: its provider calls read the claim from the handler's own request parameter` });
        out.edits.push(...keyed.edits);
      }
    }
    if (sf.getFullText() !== current) out.texts.set(item.file, sf.getFullText());
  }
  return out;
}
