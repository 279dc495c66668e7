import { Node, SyntaxKind, type ArrowFunction, type Block, type CallExpression, type FunctionDeclaration, type FunctionExpression, type MethodDeclaration, type SourceFile, type Statement } from 'ts-morph';
import { ensureNamedImport } from '../sourceFile.js';
import { handlerReference } from '../followHandler.js';
import { locateRoute } from '../locateRoute.js';
import type { WiringTarget } from '../types.js';
import { lineIndent } from './consumer.js';
import { manualOnly, type Transform, type TransformContext, type TransformOutcome } from './context.js';
import { locateNestMethod } from './nestjsRoute.js';
import { nextKindOf } from './nextRoute.js';

/** The scaffold module apply writes once next to instance.ts for webhook handlers that verify signatures themselves. */
export const WEBHOOK_EVENT_MODULE = 'webhookEvent';
const HELPER = 'onceForEvent';

/**
 * `<scaffold>/webhookEvent.ts`: createWebhookProcessor (webhooks/webhooks.ts) for an event the route has already
 * verified, so the handler keeps its own signature check. Static text: nothing from the user's code reaches it.
 */
export function renderWebhookEvent(): string {
  return `import { idempotency } from './instance.js';
import type { ActionSettings } from './types.js';
import { createWebhookProcessor, type WebhookResponse } from './webhooks/webhooks.js';

// Written once by \`idempotency-builder apply\`; yours to edit. Webhook routes that verify the signature themselves
// (stripe.webhooks.constructEvent) call onceForEvent after verifying, around the code that applies the event.

/** What every provider event carries: its id (the dedupe key, the same on each resend) and its type. */
export interface VerifiedEvent {
  readonly id: string;
  readonly type: string;
}

/**
 * Runs \`handle\` at most once per event id (claim, lease and fencing in the idempotency store, as
 * createWebhookProcessor does for a raw request). Resolves undefined when \`handle\` ran now and its outcome is
 * recorded: send your usual answer. Otherwise resolves the answer to send instead: 200 for an event already
 * applied, 409 while another delivery of it runs, 500 when \`handle\` threw (the key is released, the provider
 * resends), 503 when the store is unavailable.
 */
export async function onceForEvent(
  action: ActionSettings,
  provider: string,
  event: VerifiedEvent,
  handle: () => Promise<void>,
): Promise<WebhookResponse | undefined> {
  let ran = false;
  const process = createWebhookProcessor<VerifiedEvent>({
    core: idempotency.core,
    action,
    // Already verified by the caller: the processor only dedupes.
    source: { provider, verify: () => [event], eventId: (e) => e.id, eventType: (e) => e.type },
    handle: async () => {
      await handle();
      ran = true;
    },
  });
  const answer = await process({ rawBody: Buffer.alloc(0), headers: {} });
  return ran && answer.status === 200 ? undefined : answer;
}
`;
}

type HandlerFunction = ArrowFunction | FunctionExpression | FunctionDeclaration | MethodDeclaration;

/** Where a route verifies a delivery: the statement, the block it sits in (the handler's, or a loop's over a batch) and the expression naming the verified event. */
interface Verification {
  statement: Statement;
  block: Block;
  event: string;
  /** The handling is the whole of `block` (the branch a passing check runs), not what follows `statement` in it. */
  whole?: true;
  /** The route's middleware verified the delivery; `statement` reads the event it left on the request. */
  byMiddleware?: true;
}

/**
 * The project's middleware that verifies a Stripe delivery and leaves the event on the request for the handler
 * (`ctx.state.stripeEvent = event`, `req.stripeEvent = stripe.webhooks.constructEvent(…)`): the property names, read
 * from the source texts. Names only; the handler's own read of one is what the transform looks for.
 */
export function middlewareVerifiedEvents(texts: readonly string[]): Set<string> {
  const names = new Set<string>();
  const CONSTRUCT = String.raw`(?:await\s+)?[\w$.]+\.webhooks\.constructEvent(?:Async)?\(`;
  for (const text of texts) {
    if (!text.includes('constructEvent')) continue;
    for (const match of text.matchAll(new RegExp(String.raw`\.([A-Za-z_$][\w$]*)\s*=\s*${CONSTRUCT}`, 'g'))) names.add(match[1]!);
    for (const match of text.matchAll(new RegExp(String.raw`\b([A-Za-z_$][\w$]*)\s*=\s*${CONSTRUCT}`, 'g'))) {
      const variable = match[1]!;
      for (const assigned of text.matchAll(new RegExp(String.raw`\.([A-Za-z_$][\w$]*)\s*=\s*${variable}\b(?!\s*[.(\[])`, 'g'))) names.add(assigned[1]!);
    }
  }
  return names;
}

/** `const event: Stripe.Event = ctx.state.stripeEvent` (or `req.stripeEvent as Stripe.Event`) as a statement of `body`, reading a property middlewareVerifiedEvents found. */
function middlewareVerification(body: Block, properties: ReadonlySet<string> | undefined): Verification | undefined {
  if (!properties || properties.size === 0) return undefined;
  for (const statement of body.getStatements()) {
    if (!Node.isVariableStatement(statement)) continue;
    const declarations = statement.getDeclarations();
    const declaration = declarations.length === 1 ? declarations[0] : undefined;
    let value = declaration?.getInitializer();
    while (value && (Node.isAsExpression(value) || Node.isNonNullExpression(value) || Node.isParenthesizedExpression(value) || Node.isTypeAssertion(value))) value = value.getExpression();
    if (declaration && Node.isIdentifier(declaration.getNameNode()) && value && Node.isPropertyAccessExpression(value) && properties.has(value.getName())) {
      return { statement, block: body, event: declaration.getName(), byMiddleware: true };
    }
  }
  return undefined;
}

/**
 * A provider whose routes verify deliveries themselves: how apply finds the check in a handler body, and how the
 * verified event becomes the processor's identity (`eventOf`, from the scaffold's webhooks/verify.ts, or the event
 * itself when it already has `id` and `type`).
 */
export interface VerifiedWebhookProvider {
  readonly name: 'stripe' | 'adyen' | 'paypal';
  readonly label: string;
  /** How the route verifies, for the manual step when apply finds nothing it recognises. */
  readonly check: string;
  readonly eventOf?: string;
  /**
   * Whether a duplicate falls through to the route's own answer (Adyen expects its "[accepted]", and each item of
   * a batch is its own event) instead of the processor's 200.
   */
  readonly ownAnswer: boolean;
  verification(body: Block): Verification | undefined;
}

/** The statement of `block` that holds `node`, and that block. */
function statementOf(node: Node, within: Block): { statement: Statement; block: Block } | undefined {
  for (let current: Node | undefined = node; current && current !== within.getParent(); current = current.getParent()) {
    const parent = current.getParent();
    if (parent && Node.isBlock(parent) && Node.isStatement(current)) {
      // The innermost block that is the handler's own or a loop's: an if's block holds only the failure answer.
      const owner = parent.getParent();
      if (parent === within || (owner && (Node.isForOfStatement(owner) || Node.isForStatement(owner) || Node.isForInStatement(owner)))) return { statement: current, block: parent };
    }
  }
  return undefined;
}

/**
 * The variable a call's result lands in (`const event = …`, `event = …`, through `await` / parentheses / `as`): only
 * the call's own declaration or assignment, never one further out (the handler's own `const stripeWebhook = async …`).
 */
function assignedName(call: CallExpression): string | undefined {
  let node: Node = call;
  let parent = node.getParent();
  while (parent && (Node.isAwaitExpression(parent) || Node.isParenthesizedExpression(parent) || Node.isAsExpression(parent) || Node.isNonNullExpression(parent))) {
    node = parent;
    parent = node.getParent();
  }
  if (parent && Node.isVariableDeclaration(parent) && parent.getInitializer() === node && Node.isIdentifier(parent.getNameNode())) return parent.getName();
  if (parent && Node.isBinaryExpression(parent) && parent.getOperatorToken().getKind() === SyntaxKind.EqualsToken && parent.getRight() === node && Node.isIdentifier(parent.getLeft())) return parent.getLeft().getText();
  return undefined;
}

const STRIPE: VerifiedWebhookProvider = {
  name: 'stripe',
  label: 'Stripe',
  check: 'stripe.webhooks.constructEvent',
  ownAnswer: false,
  // `stripe.webhooks.constructEvent(...)` / `constructEventAsync`; the event is the variable it is assigned to.
  verification(body) {
    const call = body.getDescendantsOfKind(SyntaxKind.CallExpression).find((c: CallExpression) => /\.webhooks\.constructEvent(Async)?$/.test(c.getExpression().getText()));
    const at = call && statementOf(call, body);
    const event = call && assignedName(call);
    return at && event && at.block === body ? { ...at, event } : undefined;
  },
};

const ADYEN: VerifiedWebhookProvider = {
  name: 'adyen',
  label: 'Adyen',
  check: 'hmacValidator.validateHMAC(item, key) / verifyAdyenItem',
  eventOf: 'adyenEventOf',
  ownAnswer: true,
  // `validator.validateHMAC(item, key)` (@adyen/api-library) or the scaffold's verifyAdyenItem: the item is its first argument.
  verification(body) {
    const call = body.getDescendantsOfKind(SyntaxKind.CallExpression).find((c) => /(^|\.)(validateHMAC|verifyAdyenItem)$/.test(c.getExpression().getText()));
    const item = call?.getArguments()[0];
    const at = call && statementOf(call, body);
    return at && item && Node.isIdentifier(item) ? { ...at, event: item.getText() } : undefined;
  },
};

const PAYPAL: VerifiedWebhookProvider = {
  name: 'paypal',
  label: 'PayPal',
  check: 'a verify-webhook-signature call (verifyWebhookSignature, verifyPaypal...) before the event is used',
  eventOf: 'paypalEventOf',
  ownAnswer: true,
  // PayPal has no SDK check: the route calls its verify-webhook-signature API through a function of its own
  // (verify…Webhook / verify…Signature / verifyPaypal…). The event is the variable whose event_type the route reads.
  verification(body) {
    const call = body.getDescendantsOfKind(SyntaxKind.CallExpression).find((c) => /(^|\.)verify\w*(webhook|signature|paypal)\w*$/i.test(c.getExpression().getText()));
    const at = call && statementOf(call, body);
    if (!at || at.block !== body) return undefined;
    const reads = body.getDescendantsOfKind(SyntaxKind.PropertyAccessExpression).filter((p) => p.getName() === 'event_type' && Node.isIdentifier(p.getExpression()));
    const event = reads[0]?.getExpression().getText();
    if (!event) return undefined;
    // The handling starts after both the check and the event's declaration, whichever comes last.
    const declared = body.getStatements().find((s) => Node.isVariableStatement(s) && s.getDeclarations().some((d) => d.getName() === event));
    const statement = declared && declared.getStart() > at.statement.getStart() ? declared : at.statement;
    return { statement, block: body, event };
  },
};

export const VERIFIED_WEBHOOK_PROVIDERS: Readonly<Record<VerifiedWebhookProvider['name'], VerifiedWebhookProvider>> = { stripe: STRIPE, adyen: ADYEN, paypal: PAYPAL };

/** The provider of a webhook action (Stripe when the config names none, as before), or undefined for one apply does not wire. */
export function verifiedWebhookProvider(provider: string | undefined): VerifiedWebhookProvider | undefined {
  return provider === undefined ? STRIPE : VERIFIED_WEBHOOK_PROVIDERS[provider as VerifiedWebhookProvider['name']];
}

/**
 * `if (validator.validateHMAC(item, key)) { handle; answer 202 } else { answer 401 }` (Adyen's own examples): the
 * check is the condition itself (a call, not negated), and the handling is the branch it guards.
 */
function passedBranch(at: Verification): Verification | undefined {
  if (!Node.isIfStatement(at.statement)) return undefined;
  const condition = at.statement.getExpression();
  const then = at.statement.getThenStatement();
  const calls = Node.isCallExpression(condition) || condition.getDescendantsOfKind(SyntaxKind.CallExpression).length > 0;
  if (!Node.isBlock(then) || Node.isPrefixUnaryExpression(condition) || !calls) return undefined;
  return { statement: at.statement, block: then, event: at.event, whole: true };
}

/** The verification inside the `try` block of a verification statement that is a try/catch, if the check sits there. */
function tryVerification(provider: VerifiedWebhookProvider, at: Verification): Verification | undefined {
  if (!Node.isTryStatement(at.statement)) return undefined;
  const block = at.statement.getTryBlock();
  const inner = provider.verification(block);
  return inner?.block === block ? inner : undefined;
}

/** A statement that only logs (`console.log(event)`, `this.logger.debug(…)`): no handling of the event. */
function logsOnly(statement: Statement): boolean {
  if (!Node.isExpressionStatement(statement)) return false;
  const call = statement.getExpression();
  return Node.isCallExpression(call) && /^(?:this\.)?(?:console|logger|log|_logger)\.(?:log|info|debug|warn|error|trace)$/i.test(call.getExpression().getText());
}

/** Whether `block` is a loop's body (an Adyen batch's items): its handling runs per item and has no answer of its own. */
function isLoopBody(block: Block): boolean {
  const owner = block.getParent();
  return owner !== undefined && (Node.isForOfStatement(owner) || Node.isForStatement(owner) || Node.isForInStatement(owner));
}

/** `return` statements of this function itself (not of callbacks inside it). */
const ownReturns = (statement: Statement, fn: Node): Node[] => [statement, ...statement.getDescendantsOfKind(SyntaxKind.ReturnStatement)].filter((r) => Node.isReturnStatement(r) && r.getFirstAncestor((a) => Node.isArrowFunction(a) || Node.isFunctionExpression(a) || Node.isFunctionDeclaration(a) || Node.isMethodDeclaration(a)) === fn);

/**
 * The frameworks whose webhook handlers apply wraps; 'next-pages' is a Next.js Pages API route (`export default
 * function handler(req, res)`), answered through its res.
 */
export type WebhookFramework = 'express' | 'fastify' | 'koa' | 'hono' | 'nestjs' | 'nextjs' | 'next-pages';
export const WEBHOOK_FRAMEWORKS: ReadonlySet<string> = new Set<string>(['express', 'fastify', 'koa', 'hono', 'nestjs', 'nextjs']);
/** The frameworks whose routes take the handler as their last argument: `app.post(path, ...middleware, handler)`. */
const ROUTE_CALL_FRAMEWORKS: ReadonlySet<WebhookFramework> = new Set<WebhookFramework>(['express', 'fastify', 'koa', 'hono']);

/** The handler's parameter the answer goes through: Express's res, Fastify's reply, Koa's ctx, Hono's c. */
const ANSWER_PARAMETER: Partial<Record<WebhookFramework, { index: number; label: string }>> = { express: { index: 1, label: 'response' }, fastify: { index: 1, label: 'reply' }, koa: { index: 0, label: 'context' }, hono: { index: 0, label: 'context' }, 'next-pages': { index: 1, label: 'response' } };

/** The handler of the target's route: the inline callback (Express, Fastify, Koa, Hono), the controller method, the exported route function. */
function locateHandler(sf: SourceFile, target: WiringTarget, framework: WebhookFramework, context: TransformContext): { fn: HandlerFunction; line: number } | undefined {
  if (framework === 'nestjs') {
    const method = locateNestMethod(sf, target, context.anyLine)?.method;
    return method ? { fn: method, line: method.getStartLineNumber() } : undefined;
  }
  if (framework === 'next-pages') {
    // `export default async function handler(req, res)`, or `export default handler` naming one in the file.
    const declared = sf.getFunctions().find((f) => f.isDefaultExport());
    const named = sf.getExportAssignment((d) => !d.isExportEquals())?.getExpression();
    const fn = declared ?? (named && Node.isIdentifier(named) ? sf.getFunction(named.getText()) : undefined);
    return fn ? { fn, line: fn.getStartLineNumber() } : undefined;
  }
  if (framework === 'nextjs') {
    if (nextKindOf(target.file, sf.getFullText()) !== 'route') return undefined;
    const name = (target.method ?? 'POST').toUpperCase();
    const fn = sf.getFunction(name);
    if (fn?.isExported()) return { fn, line: fn.getStartLineNumber() };
    const declaration = sf.getVariableDeclaration(name);
    const initializer = declaration?.getVariableStatement()?.isExported() ? declaration.getInitializer() : undefined;
    return initializer && (Node.isArrowFunction(initializer) || Node.isFunctionExpression(initializer)) ? { fn: initializer, line: declaration!.getStartLineNumber() } : undefined;
  }
  const located = locateRoute(sf, target, context.anyLine);
  if (located.kind !== 'found') return undefined;
  const handler = located.call.getArguments()[located.call.getArguments().length - 1];
  return handler && (Node.isArrowFunction(handler) || Node.isFunctionExpression(handler)) ? { fn: handler, line: located.call.getStartLineNumber() } : undefined;
}

/**
 * The statements that send the processor's answer instead of the handler's own (a duplicate, an event in flight, a
 * failed handler), in the framework's idiom. NestJS handlers return their body: a 2xx answer (a duplicate already
 * applied) falls through to the handler's own answer, any other is thrown as an HttpException with its status.
 */
function answerLines(framework: WebhookFramework, response: string | undefined, unit: string, semi: string): string[] | undefined {
  if (framework === 'express') return response ? [`${unit}${response}.status(answered.status).set(answered.headers).send(answered.body)${semi}`, `${unit}return${semi}`] : undefined;
  if (framework === 'fastify') return response ? [`${unit}return ${response}.code(answered.status).headers(answered.headers).send(answered.body)${semi}`] : undefined;
  if (framework === 'koa') return response ? [`${unit}${response}.status = answered.status${semi}`, `${unit}${response}.set(answered.headers)${semi}`, `${unit}${response}.body = answered.body${semi}`, `${unit}return${semi}`] : undefined;
  if (framework === 'hono') return [`${unit}return new Response(answered.body, { status: answered.status, headers: answered.headers })${semi}`];
  if (framework === 'nextjs') return [`${unit}return new Response(answered.body, { status: answered.status, headers: answered.headers })${semi}`];
  // Node's ServerResponse, which NextApiResponse extends: no Next.js helper needed.
  if (framework === 'next-pages') return response ? [`${unit}${response}.statusCode = answered.status${semi}`, `${unit}for (const [name, value] of Object.entries(answered.headers)) ${response}.setHeader(name, value)${semi}`, `${unit}${response}.end(answered.body)${semi}`, `${unit}return${semi}`] : undefined;
  return [`${unit}throw new HttpException(answered.body, answered.status)${semi}`];
}

/**
 * Webhook routes that verify the delivery themselves (Stripe `stripe.webhooks.constructEvent` on the raw body,
 * Adyen `validateHMAC(item, key)` per notification item, PayPal a verify-webhook-signature call of the app's own),
 * on Express, Fastify, Koa and Hono routes, NestJS controllers and Next.js App Router route handlers: the statements
 * that apply the event, between the verification and the final answer (for an Adyen batch, the rest of the loop body
 * over its items), run
 * inside `onceForEvent(ACTIONS.x, '<provider>', <event identity>, async () => { … })`, keyed by the provider's event
 * id (Stripe's evt_..., Adyen's pspReference + eventCode, PayPal's WH-...). An event in flight or a failed handler
 * gets the processor's answer instead; a duplicate gets the processor's 200 (Stripe) or the route's own answer
 * (Adyen's "[accepted]", PayPal). The verification stays where it is, first. Any other webhook route goes to the
 * framework's route transform, which leaves it as a manual step (webhookManual.ts).
 */
export function wireVerifiedWebhook(fallback: Transform, framework: string, provider: VerifiedWebhookProvider | undefined): Transform {
  return (sf, target, context) => {
    if (!WEBHOOK_FRAMEWORKS.has(framework) || !provider) return fallback(sf, target, context);
    const kind: WebhookFramework = framework === 'nextjs' && nextKindOf(target.file, sf.getFullText()) === 'pages' ? 'next-pages' : (framework as WebhookFramework);
    const located = locateHandler(sf, target, kind, context);
    if (!located) {
      // A handler passed by name is wrapped where it is declared (namedHandlers.ts), by the pass that follows it.
      const route = ROUTE_CALL_FRAMEWORKS.has(kind) ? locateRoute(sf, target, context.anyLine) : undefined;
      const reference = route?.kind === 'found' ? handlerReference(route.call, kind) : undefined;
      if (route?.kind === 'found' && reference) return manualOnly(target, `${NAMED_WEBHOOK} (${reference.getText()}): run apply on the whole project (it follows the name to the handler's declaration), or wrap its event handling after the signature check in ${HELPER}() by hand`, route.call.getStartLineNumber());
      return fallback(sf, target, context);
    }
    return wrapVerifiedHandler(sf, located.fn, target, kind, provider, context, located.line) ?? fallback(sf, target, context);
  };
}

/** How the step about a webhook route whose handler is a name starts (planApply drops it once the handler was followed). */
export const NAMED_WEBHOOK = 'the webhook route passes its handler by name';

/**
 * The dedupe of one verified-webhook handler function, wherever it is declared: the route's inline callback, or the
 * function a route names (`app.post('/webhooks/stripe', express.raw(...), stripeWebhook)`, followed to its module by
 * namedHandlers.ts). Undefined when the function has no verification apply recognises; `line` is where the manual
 * steps point.
 */
export function wrapVerifiedHandler(sf: SourceFile, handler: HandlerFunction, target: WiringTarget, kind: WebhookFramework, provider: VerifiedWebhookProvider, context: TransformContext, line: number): TransformOutcome | undefined {
  const own = handler.getBody();
  if (!own || !Node.isBlock(own)) return undefined;
  // `if (req.method === "POST") { verify; handle; answer } else { 405 }`: the method's branch is where the work is.
  const methodCheck = own.getStatements().find((s) => Node.isIfStatement(s) && /\.method\b/.test(s.getExpression().getText()));
  const branch = methodCheck && Node.isIfStatement(methodCheck) ? methodCheck.getThenStatement() : undefined;
  const body = branch && Node.isBlock(branch) && provider.verification(branch) ? branch : own;
  let verified = provider.verification(body) ?? (provider.name === 'stripe' ? middlewareVerification(body, context.verifiedEvents) : undefined);
  if (!verified) return undefined;
  if (body.getText().includes(`${HELPER}(`)) return { edits: [], manual: [] };
  const call = `${HELPER}(ACTIONS.${target.codeName}, '${provider.name}', ${provider.eventOf ? `${provider.eventOf}(${verified.event})` : verified.event}, async () => { … })`;
  if (/\banswered\b/.test(body.getText())) return manualOnly(target, `the webhook handler at line ${line} already has a variable named answered; wrap its event handling in ${HELPER}() by hand`, line);
  if (!handler.isAsync()) return manualOnly(target, `the webhook handler at line ${line} is not async; make it async, then wrap the event handling in ${HELPER}() from ${WEBHOOK_EVENT_MODULE}.ts`, line);
  const answerParameter = ANSWER_PARAMETER[kind];
  const responseNode = answerParameter ? handler.getParameters()[answerParameter.index]?.getNameNode() : undefined;
  const res = responseNode && Node.isIdentifier(responseNode) ? responseNode.getText() : undefined;
  if (answerParameter && !res) return manualOnly(target, `the webhook handler at line ${line} has no named ${answerParameter.label} parameter`, line);
  // The final answer (res.json(...), reply.send(), return { received: true }, return Response.json(...)) stays after the dedupe.
  const answers = (s: Statement) => (res !== undefined && new RegExp(`^(return\\s+)?${res}\\.`).test(s.getText())) || Node.isReturnStatement(s);
  const handlingAfter = (at: Verification) => {
    const statements = at.block.getStatements();
    const after = at.whole ? statements : statements.slice(statements.indexOf(at.statement) + 1);
    let end = after.length;
    while (!isLoopBody(at.block) && end > 0 && answers(after[end - 1]!)) end--;
    return after.slice(0, end);
  };
  // A body that is one `try { verify; handle; answer } catch { … }`: the dedupe goes inside the try, right after the
  // check, where the verified event is in scope, and the catch keeps answering a bad signature as before. A try that
  // holds only the check (`try { event = … } catch { return 400 }`) keeps the handling after it, at this level, and so
  // does one that only logs the event after the check (`console.log(event)`) when the handling follows the try.
  for (let inner = tryVerification(provider, verified); inner; inner = tryVerification(provider, inner)) {
    const inside = handlingAfter(inner);
    if (inside.length === 0) break;
    const outside = handlingAfter(verified);
    if (outside.length > 0) {
      if (inside.every(logsOnly)) break;
      return manualOnly(target, `the event is handled both inside the try block that checks its signature (line ${inside[0]!.getStartLineNumber()}) and after it (line ${outside[0]!.getStartLineNumber()}); move the handling to one place, then wrap it in ${call} from ${WEBHOOK_EVENT_MODULE}.ts`, line);
    }
    verified = inner;
  }
  // The check as an if's condition guarding the handling (the if holds the check, its branch does not).
  const passed = handlingAfter(verified).length === 0 ? passedBranch(verified) : undefined;
  if (passed && provider.verification(passed.block) === undefined && handlingAfter(passed).length > 0) verified = passed;
  const inLoop = isLoopBody(verified.block);
  const handling = handlingAfter(verified);
  if (handling.length === 0) return manualOnly(target, `the webhook handler at line ${line} has no statements between the signature check and the answer to wrap; call ${call} from ${WEBHOOK_EVENT_MODULE}.ts around the code that applies the event`, line);
  const mixed = handling.find((s) => ownReturns(s, handler).length > 0 || (res !== undefined && s.getDescendantsOfKind(SyntaxKind.Identifier).some((id) => id.getText() === res)));
  if (mixed) return manualOnly(target, `the event handling at line ${mixed.getStartLineNumber()} answers or returns by itself; move the answer after it, then wrap the handling in ${call} from ${WEBHOOK_EVENT_MODULE}.ts`, line);
  // A continue or break cannot cross into the callback the handling moves into.
  const leaves = inLoop ? handling.find((s) => Node.isContinueStatement(s) || Node.isBreakStatement(s) || s.getDescendantsOfKind(SyntaxKind.ContinueStatement).length > 0 || s.getDescendantsOfKind(SyntaxKind.BreakStatement).length > 0) : undefined;
  if (leaves) return manualOnly(target, `the event handling at line ${leaves.getStartLineNumber()} leaves the loop over the notification items (continue / break); restructure it, then wrap the handling in ${call} from ${WEBHOOK_EVENT_MODULE}.ts`, line);
  if (!context.scaffoldModules.has('webhooks/webhooks')) return manualOnly(target, 'the scaffold has no webhooks/webhooks.ts: run generate with this webhook action in the config, then apply', line);
  if (provider.eventOf && !context.scaffoldModules.has('webhooks/verify')) return manualOnly(target, 'the scaffold has no webhooks/verify.ts: run generate with this webhook action in the config, then apply', line);
  // Measured before the imports go in: an added import line shifts everything below it.
  const indent = lineIndent(handling[0]!);
  const unit = sf.getProject().manipulationSettings.getIndentationText();
  const semi = context.style.semicolons ? ';' : '';
  const answer = answerLines(kind, res, unit, semi)!;
  const handlingSpan = [handling[0]!.getStart(), handling[handling.length - 1]!.getEnd()] as const;
  const textBefore = sf.getFullText();
  if (kind === 'nestjs' && !ensureNamedImport(sf, '@nestjs/common', 'HttpException')) return manualOnly(target, 'the file already binds HttpException to something else', line);
  const imports: Array<[string, string]> = [[context.style.specifier('index'), 'ACTIONS'], [context.style.specifier(WEBHOOK_EVENT_MODULE), HELPER]];
  if (provider.eventOf) imports.push([context.style.specifier('webhooks/verify'), provider.eventOf]);
  const clash = imports.find(([module, name]) => !ensureNamedImport(sf, module, name));
  if (clash) {
    sf.replaceWithText(textBefore);
    return manualOnly(target, `the file already binds ${clash[1]} to something else`, line);
  }
  // The imports only ever go above the handler: the handling moved by the added characters, nothing else.
  const shift = sf.getFullText().length - textBefore.length;
  const [start, stop] = [handlingSpan[0] + shift, handlingSpan[1] + shift];
  const text = sf.getFullText();
  const inner = text.slice(start, stop).replace(/\n(?=[^\n])/g, `\n${unit}`);
  const quote = context.style.quote === 'double' ? '"' : "'";
  const eventExpression = provider.eventOf ? `${provider.eventOf}(${verified.event})` : verified.event;
  const guard = kind === 'nestjs' || provider.ownAnswer ? 'answered && answered.status >= 300' : 'answered';
  const wrapped = [
    `const answered = await ${HELPER}(ACTIONS.${target.codeName}, ${quote}${provider.name}${quote}, ${eventExpression}, async () => {`,
    `${indent}${unit}${inner}`,
    `${indent}})${semi}`,
    `${indent}if (${guard}) {`,
    ...answer.map((l) => `${indent}${l}`),
    `${indent}}`,
  ].join('\n');
  sf.replaceText([start, stop], wrapped);
  const where = kind === 'nestjs' ? `the controller method at line ${line}` : kind === 'nextjs' ? `the ${target.method ?? 'POST'} route handler of ${target.path ?? ''}` : kind === 'next-pages' ? `the Pages API route ${target.path ?? ''}` : `${target.method ?? 'POST'} ${target.path ?? ''}`;
  const per = inLoop ? 'once per notification item, keyed by its event id' : 'once per event id';
  const out: TransformOutcome = { edits: [], manual: [] };
  const after = verified.byMiddleware ? "after the route's middleware verified the delivery" : 'after the signature check';
  out.edits.push({ action: target.action, file: target.file, summary: `runs the ${provider.label} event handling of ${where} ${per} (${HELPER}), ${after}` });
  return out;
}
