import { ts } from 'ts-morph';
import { unwrap } from '../../inspect/parse/astHelpers.js';
import { handlerOf } from '../actionFacts.js';
import { actionSource } from '../configSources.js';
import type { ProjectReport, Rule } from '../types.js';
import { functionLabel } from '../walk.js';

/** Calls on the response object that send it: Express `res.sendStatus(200)` / `res.send()`, Fastify `reply.send()`. */
const SENDS = new Set(['sendStatus', 'send', 'json', 'end']);

/**
 * A webhook handler that answers 2xx first and handles the event afterwards: the provider has seen a success, so a
 * crash, a deploy or an error in the handling loses the event for good, and no idempotency layer can bring it back.
 */
export const webhookAcknowledgedBeforeProcessing: Rule = {
  id: 'webhook-acknowledged-before-processing',
  severity: 'warning',
  title: 'Webhook acknowledged before its event is handled',
  description:
    'The handler answers success before it processes the event. The provider then never resends it, so an error, a ' +
    'crash or a deploy during the handling loses the event for good: delivery becomes at most once, and recording ' +
    'the response as this request\'s outcome would replay a success for work that never finished.',
  fix: 'Handle the event (or store it durably, e.g. an inbox row keyed by the event id) before answering 2xx, and answer 5xx when that fails so the provider redelivers. If the work is slow, answer after the durable insert and process the inbox in a worker.',
  docsAnchor: 'finding-webhook-acknowledged-before-processing',
  checkProject(ctx) {
    const out: ProjectReport[] = [];
    // Webhooks inspection found, and (for `audit`, which runs no full inspection) the config's webhook actions.
    const hooks = new Map<string, { file: string; line: number; route?: string }>();
    for (const finding of ctx.inspection?.findings ?? []) {
      if (finding.kind === 'webhook') hooks.set(`${finding.file}:${finding.line}`, { file: finding.file, line: finding.line, ...(finding.route ? { route: finding.route } : {}) });
    }
    for (const action of ctx.config?.actions ?? []) {
      const at = action.trigger === 'webhook' ? actionSource(ctx, action) : undefined;
      if (at?.file && !hooks.has(`${at.file}:${at.line}`)) hooks.set(`${at.file}:${at.line}`, { file: at.file, line: at.line, ...(action.route ? { route: action.route } : {}) });
    }
    for (const finding of hooks.values()) {
      const handler = handlerOf(ctx, finding.file, finding.line);
      const body = handler?.fn.body;
      if (!handler || !body || !ts.isBlock(body)) continue;
      const statements = body.statements;
      const name = functionLabel(handler.fn) ?? 'the webhook handler';
      const sf = handler.source.sf;
      // `processNewOrder(session).then(…).catch(…)` left running: the handler returns, and the provider gets its 2xx,
      // while the work goes on (or, on a serverless runtime, is frozen with the response).
      const floating = statements.flatMap((s) => {
        const started = ts.isExpressionStatement(s) ? floatingPromise(s.expression) : undefined;
        return started ? [{ statement: s, started }] : [];
      })[0];
      if (floating) {
        const { statement, started } = floating;
        out.push({
          file: handler.source.rel,
          line: sf.getLineAndCharacterOfPosition(statement.getStart(sf)).line + 1,
          evidence: statement.getText(sf).trim().split('\n')[0] ?? '',
          message: `${finding.route ? `${finding.route}: ` : ''}${name} starts \`${started.getText(sf).replace(/\s+/g, ' ').slice(0, 60)}\` without awaiting it, so the provider is answered with success while the event is still being handled: an error or a crash (or a serverless runtime freezing after the response) loses the event, since the provider will not resend it.`,
        });
        continue;
      }
      const response = handler.fn.parameters[1]?.name;
      if (!response || !ts.isIdentifier(response)) continue;
      const at = statements.findIndex((s) => ts.isExpressionStatement(s) && sendsSuccess(s.expression, response.text));
      if (at < 0 || !statements.slice(at + 1).some(awaits)) continue;
      const ack = statements[at]!;
      const line = sf.getLineAndCharacterOfPosition(ack.getStart(sf)).line + 1;
      out.push({
        file: handler.source.rel,
        line,
        evidence: ack.getText(sf).trim(),
        message: `${finding.route ? `${finding.route}: ` : ''}${name} answers the provider with success here, before it handles the event: an error or a crash after this line loses the event, since the provider will not resend it.`,
      });
    }
    return out;
  },
};

/** `res.sendStatus(200)`, `res.status(202).send()`, `res.json({ received: true })`, `res.end()`: a 2xx (or default) answer. */
function sendsSuccess(expression: ts.Expression, response: string): boolean {
  const call = unwrap(expression);
  if (!ts.isCallExpression(call) || !ts.isPropertyAccessExpression(call.expression) || !SENDS.has(call.expression.name.text)) return false;
  let receiver = unwrap(call.expression.expression);
  let status: ts.Expression | undefined = call.expression.name.text === 'sendStatus' ? call.arguments[0] : undefined;
  // `res.status(200).send()` / `reply.code(200).send()`: the status is the inner call's argument.
  if (ts.isCallExpression(receiver) && ts.isPropertyAccessExpression(receiver.expression) && /^(status|code)$/.test(receiver.expression.name.text)) {
    status = receiver.arguments[0];
    receiver = unwrap(receiver.expression.expression);
  }
  if (!ts.isIdentifier(receiver) || receiver.text !== response) return false;
  if (status === undefined) return call.expression.name.text !== 'sendStatus';
  return ts.isNumericLiteral(status) && Number(status.text) >= 200 && Number(status.text) < 300;
}

/**
 * A promise the statement starts and drops: a chain ending in `.then(…)`, `.catch(…)` or `.finally(…)`, or `void
 * work()`. Its first call is returned (`processNewOrder(session)`).
 */
function floatingPromise(expression: ts.Expression): ts.CallExpression | undefined {
  let node = unwrap(expression);
  if (ts.isVoidExpression(node)) node = unwrap(node.expression);
  else if (!(ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && /^(then|catch|finally)$/.test(node.expression.name.text))) return undefined;
  while (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && /^(then|catch|finally)$/.test(node.expression.name.text)) node = unwrap(node.expression.expression);
  return ts.isCallExpression(node) ? node : undefined;
}

function awaits(node: ts.Node): boolean {
  if (ts.isAwaitExpression(node)) return true;
  // A function declared later is not run here.
  if (ts.isFunctionLike(node)) return false;
  return ts.forEachChild(node, awaits) ?? false;
}
