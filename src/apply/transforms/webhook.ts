import { Node, SyntaxKind, type ArrowFunction, type Block, type CallExpression, type FunctionDeclaration, type FunctionExpression, type MethodDeclaration, type SourceFile, type Statement } from 'ts-morph';
import { ensureNamedImport } from '../sourceFile.js';
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

/** `stripe.webhooks.constructEvent(...)` / `constructEventAsync` inside the handler, with the event's variable. */
function verification(body: Block): { statement: Statement; event: string } | undefined {
  const call = body.getDescendantsOfKind(SyntaxKind.CallExpression).find((c: CallExpression) => /\.webhooks\.constructEvent(Async)?$/.test(c.getExpression().getText()));
  if (!call) return undefined;
  const statement = body.getStatements().find((s) => s.getStart() <= call.getStart() && call.getEnd() <= s.getEnd());
  if (!statement) return undefined;
  const declaration = call.getFirstAncestorByKind(SyntaxKind.VariableDeclaration);
  if (declaration && Node.isIdentifier(declaration.getNameNode())) return { statement, event: declaration.getName() };
  const assignment = call.getFirstAncestorByKind(SyntaxKind.BinaryExpression);
  if (assignment && assignment.getOperatorToken().getKind() === SyntaxKind.EqualsToken && Node.isIdentifier(assignment.getLeft())) return { statement, event: assignment.getLeft().getText() };
  return undefined;
}

/** `return` statements of this function itself (not of callbacks inside it). */
const ownReturns = (statement: Statement, fn: Node): Node[] => [statement, ...statement.getDescendantsOfKind(SyntaxKind.ReturnStatement)].filter((r) => Node.isReturnStatement(r) && r.getFirstAncestor((a) => Node.isArrowFunction(a) || Node.isFunctionExpression(a) || Node.isFunctionDeclaration(a) || Node.isMethodDeclaration(a)) === fn);

/** The frameworks whose webhook handlers apply wraps, and how each answers with the processor's response. */
export type WebhookFramework = 'express' | 'fastify' | 'nestjs' | 'nextjs';
const WEBHOOK_FRAMEWORKS = new Set<string>(['express', 'fastify', 'nestjs', 'nextjs']);

/** The handler of the target's route: the inline callback (Express, Fastify), the controller method, the exported route function. */
function locateHandler(sf: SourceFile, target: WiringTarget, framework: WebhookFramework, context: TransformContext): { fn: HandlerFunction; line: number } | undefined {
  if (framework === 'nestjs') {
    const method = locateNestMethod(sf, target, context.anyLine)?.method;
    return method ? { fn: method, line: method.getStartLineNumber() } : undefined;
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
  if (framework === 'nextjs') return [`${unit}return new Response(answered.body, { status: answered.status, headers: answered.headers })${semi}`];
  return [`${unit}throw new HttpException(answered.body, answered.status)${semi}`];
}

/**
 * Webhook routes that verify the signature themselves (`stripe.webhooks.constructEvent` on the raw body), on
 * Express, Fastify, NestJS controllers and Next.js App Router route handlers: the statements that apply the event,
 * between the verification and the final answer, run inside `onceForEvent(ACTIONS.x, 'stripe', event, async () =>
 * { … })`, keyed by the event id. A duplicate, an event in flight or a failed handler gets the processor's answer
 * instead. The signature check stays where it is, first, on the raw body. Any other webhook route goes to the
 * framework's route transform, which leaves it as a manual step (webhookManual.ts).
 */
export function wireStripeWebhook(fallback: Transform, framework: string): Transform {
  return (sf, target, context) => {
    if (!WEBHOOK_FRAMEWORKS.has(framework) || (target.provider !== undefined && target.provider !== 'stripe')) return fallback(sf, target, context);
    const kind = framework as WebhookFramework;
    const located = locateHandler(sf, target, kind, context);
    if (!located) return fallback(sf, target, context);
    const { fn: handler, line } = located;
    const body = handler.getBody();
    if (!body || !Node.isBlock(body)) return fallback(sf, target, context);
    const verified = verification(body);
    if (!verified) return fallback(sf, target, context);
    if (body.getText().includes(`${HELPER}(`)) return { edits: [], manual: [] };
    if (/\banswered\b/.test(body.getText())) return manualOnly(target, `the webhook handler at line ${line} already has a variable named answered; wrap its event handling in ${HELPER}() by hand`, line);
    if (!handler.isAsync()) return manualOnly(target, `the webhook handler at line ${line} is not async; make it async, then wrap the event handling in ${HELPER}() from ${WEBHOOK_EVENT_MODULE}.ts`, line);
    const responseNode = kind === 'express' || kind === 'fastify' ? handler.getParameters()[1]?.getNameNode() : undefined;
    const res = responseNode && Node.isIdentifier(responseNode) ? responseNode.getText() : undefined;
    if ((kind === 'express' || kind === 'fastify') && !res) return manualOnly(target, `the webhook handler at line ${line} has no named ${kind === 'fastify' ? 'reply' : 'response'} parameter`, line);
    const statements = body.getStatements();
    const after = statements.slice(statements.indexOf(verified.statement) + 1);
    // The final answer (res.json(...), reply.send(), return { received: true }, return Response.json(...)) stays after the dedupe.
    const answers = (s: Statement) => (res !== undefined && new RegExp(`^(return\\s+)?${res}\\.`).test(s.getText())) || Node.isReturnStatement(s);
    let end = after.length;
    while (end > 0 && answers(after[end - 1]!)) end--;
    const handling = after.slice(0, end);
    if (handling.length === 0) return manualOnly(target, `the webhook handler at line ${line} has no statements between the signature check and the answer to wrap; call ${HELPER}() from ${WEBHOOK_EVENT_MODULE}.ts around the code that applies the event`, line);
    const mixed = handling.find((s) => ownReturns(s, handler).length > 0 || (res !== undefined && s.getDescendantsOfKind(SyntaxKind.Identifier).some((id) => id.getText() === res)));
    if (mixed) return manualOnly(target, `the event handling at line ${mixed.getStartLineNumber()} answers or returns by itself; move the answer after it, then wrap the handling in ${HELPER}(ACTIONS.${target.codeName}, 'stripe', event, async () => { … }) from ${WEBHOOK_EVENT_MODULE}.ts`, line);
    if (!context.scaffoldModules.has('webhooks/webhooks')) return manualOnly(target, 'the scaffold has no webhooks/webhooks.ts: run generate with this webhook action in the config, then apply', line);
    // Measured before the imports go in: an added import line shifts everything below it.
    const indent = lineIndent(handling[0]!);
    const unit = sf.getProject().manipulationSettings.getIndentationText();
    const semi = context.style.semicolons ? ';' : '';
    const answer = answerLines(kind, res, unit, semi)!;
    const handlingSpan = [handling[0]!.getStart(), handling[handling.length - 1]!.getEnd()] as const;
    const textBefore = sf.getFullText();
    if (kind === 'nestjs' && !ensureNamedImport(sf, '@nestjs/common', 'HttpException')) return manualOnly(target, 'the file already binds HttpException to something else', line);
    if (!ensureNamedImport(sf, context.style.specifier('index'), 'ACTIONS') || !ensureNamedImport(sf, context.style.specifier(WEBHOOK_EVENT_MODULE), HELPER)) {
      sf.replaceWithText(textBefore);
      return manualOnly(target, `the file already binds ACTIONS or ${HELPER} to something else`, line);
    }
    // The imports only ever go above the handler: the handling moved by the added characters, nothing else.
    const shift = sf.getFullText().length - textBefore.length;
    const [start, stop] = [handlingSpan[0] + shift, handlingSpan[1] + shift];
    const text = sf.getFullText();
    const inner = text.slice(start, stop).replace(/\n(?=[^\n])/g, `\n${unit}`);
    const quote = context.style.quote === 'double' ? '"' : "'";
    const guard = kind === 'nestjs' ? 'answered && answered.status >= 300' : 'answered';
    const wrapped = [
      `const answered = await ${HELPER}(ACTIONS.${target.codeName}, ${quote}stripe${quote}, ${verified.event}, async () => {`,
      `${indent}${unit}${inner}`,
      `${indent}})${semi}`,
      `${indent}if (${guard}) {`,
      ...answer.map((l) => `${indent}${l}`),
      `${indent}}`,
    ].join('\n');
    sf.replaceText([start, stop], wrapped);
    const where = kind === 'nestjs' ? `the controller method at line ${line}` : kind === 'nextjs' ? `the ${target.method ?? 'POST'} route handler of ${target.path ?? ''}` : `${target.method ?? 'POST'} ${target.path ?? ''}`;
    const out: TransformOutcome = { edits: [], manual: [] };
    out.edits.push({ action: target.action, file: target.file, summary: `runs the Stripe event handling of ${where} once per event id (${HELPER}), after the signature check` });
    return out;
  };
}
