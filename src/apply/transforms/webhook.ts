import { Node, SyntaxKind, type Block, type CallExpression, type Statement } from 'ts-morph';
import { ensureNamedImport } from '../sourceFile.js';
import { locateRoute } from '../locateRoute.js';
import { lineIndent } from './consumer.js';
import { manualOnly, type Transform, type TransformOutcome } from './context.js';

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

/**
 * Express webhook routes that verify the signature themselves (`stripe.webhooks.constructEvent` on the raw body):
 * the statements that apply the event, between the verification and the final answer, run inside
 * `onceForEvent(ACTIONS.x, 'stripe', event, async () => { … })`, keyed by the event id. A duplicate, an event in
 * flight or a failed handler gets the processor's answer instead. The signature check stays where it is. Any other
 * webhook route goes to the framework's route transform.
 */
export function wireStripeWebhook(fallback: Transform, framework: string): Transform {
  return (sf, target, context) => {
    if (framework !== 'express') return fallback(sf, target, context);
    const located = locateRoute(sf, target, context.anyLine);
    if (located.kind !== 'found') return fallback(sf, target, context);
    const handler = located.call.getArguments()[located.call.getArguments().length - 1];
    if (!handler || !(Node.isArrowFunction(handler) || Node.isFunctionExpression(handler))) return fallback(sf, target, context);
    const body = handler.getBody();
    if (!Node.isBlock(body)) return fallback(sf, target, context);
    const verified = verification(body);
    if (!verified) return fallback(sf, target, context);
    const line = located.call.getStartLineNumber();
    if (body.getText().includes(`${HELPER}(`)) return { edits: [], manual: [] };
    if (/\banswered\b/.test(body.getText())) return manualOnly(target, `the webhook handler at line ${line} already has a variable named answered; wrap its event handling in ${HELPER}() by hand`, line);
    const response = handler.getParameters()[1]?.getNameNode();
    if (!response || !Node.isIdentifier(response)) return manualOnly(target, `the webhook handler at line ${line} has no named response parameter`, line);
    const res = response.getText();
    const statements = body.getStatements();
    const after = statements.slice(statements.indexOf(verified.statement) + 1);
    // The final answer (res.json(...), res.sendStatus(200), return res.send()) stays after the dedupe.
    const answers = (s: Statement) => new RegExp(`^(return\\s+)?${res}\\.`).test(s.getText()) || /^return\s*;?$/.test(s.getText());
    let end = after.length;
    while (end > 0 && answers(after[end - 1]!)) end--;
    const handling = after.slice(0, end);
    if (handling.length === 0) return manualOnly(target, `the webhook handler at line ${line} has no statements between the signature check and the answer to wrap; call ${HELPER}() from ${WEBHOOK_EVENT_MODULE}.ts around the code that applies the event`, line);
    const mixed = handling.find((s) => ownReturns(s, handler).length > 0 || s.getDescendantsOfKind(SyntaxKind.Identifier).some((id) => id.getText() === res));
    if (mixed) return manualOnly(target, `the event handling at line ${mixed.getStartLineNumber()} answers or returns by itself; move the answer after it, then wrap the handling in ${HELPER}(ACTIONS.${target.codeName}, 'stripe', event, async () => { … }) from ${WEBHOOK_EVENT_MODULE}.ts`, line);
    if (!context.scaffoldModules.has('webhooks/webhooks')) return manualOnly(target, 'the scaffold has no webhooks/webhooks.ts: run generate with this webhook action in the config, then apply', line);
    if (!ensureNamedImport(sf, context.style.specifier('index'), 'ACTIONS') || !ensureNamedImport(sf, context.style.specifier(WEBHOOK_EVENT_MODULE), HELPER)) {
      return manualOnly(target, `the file already binds ACTIONS or ${HELPER} to something else`, line);
    }
    const text = sf.getFullText();
    const first = handling[0]!;
    const last = handling[handling.length - 1]!;
    const indent = lineIndent(first);
    const unit = sf.getProject().manipulationSettings.getIndentationText();
    const inner = text.slice(first.getStart(), last.getEnd()).replace(/\n(?=[^\n])/g, `\n${unit}`);
    const quote = context.style.quote === 'double' ? '"' : "'";
    const semi = context.style.semicolons ? ';' : '';
    const wrapped = [
      `const answered = await ${HELPER}(ACTIONS.${target.codeName}, ${quote}stripe${quote}, ${verified.event}, async () => {`,
      `${indent}${unit}${inner}`,
      `${indent}})${semi}`,
      `${indent}if (answered) {`,
      `${indent}${unit}${res}.status(answered.status).set(answered.headers).send(answered.body)${semi}`,
      `${indent}${unit}return${semi}`,
      `${indent}}`,
    ].join('\n');
    sf.replaceText([first.getStart(), last.getEnd()], wrapped);
    const out: TransformOutcome = { edits: [], manual: [] };
    out.edits.push({ action: target.action, file: target.file, summary: `runs the Stripe event handling of ${target.method ?? 'POST'} ${target.path ?? ''} once per event id (${HELPER}), after the signature check` });
    return out;
  };
}
