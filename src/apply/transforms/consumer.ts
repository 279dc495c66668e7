import { Node, SyntaxKind, type ArrowFunction, type CallExpression, type Expression, type FunctionExpression, type NewExpression, type PropertyAccessExpression, type SourceFile } from 'ts-morph';
import { ensureNamedImport } from '../sourceFile.js';
import type { WiringTarget } from '../types.js';
import { manualOnly, type Transform, type TransformContext, type TransformOutcome } from './context.js';
import { wireNestBullProcess } from './nestBullProcess.js';

/** A registration apply recognises: the node, which library's shape it is, and the argument that is the handler. */
export type TriggerCall = CallExpression | NewExpression;

export interface TriggerShape<K extends string> {
  kind: K;
  node: TriggerCall;
}

export type TriggerLocated<K extends string> =
  | { kind: 'found'; shape: TriggerShape<K>; occurrence?: number }
  | { kind: 'stale'; reason: string }
  | { kind: 'unknown' };

/** The last name of a callee: `Worker` for `new bullmq.Worker(...)`, `schedule` for `cron.schedule(...)`. */
export function calleeName(node: TriggerCall): string {
  const callee = node.getExpression();
  if (Node.isIdentifier(callee)) return callee.getText();
  if (Node.isPropertyAccessExpression(callee)) return callee.getName();
  return '';
}

/**
 * The registration the action's `source` line points at, among the file's registrations of a shape this transform
 * knows (in source order). A recorded occurrence (resolved on the untouched text) wins; then the innermost one
 * spanning the line; then, in a file the last apply wrote, the one already wired for this action. Registrations of
 * known shapes elsewhere mean the file moved on (stale); none at all means a shape apply does not know.
 */
export function locateTrigger<K extends string>(sf: SourceFile, target: WiringTarget, anyLine: boolean, classify: (node: TriggerCall) => K | undefined): TriggerLocated<K> {
  const nodes: Array<TriggerShape<K>> = [];
  for (const node of [...sf.getDescendantsOfKind(SyntaxKind.CallExpression), ...sf.getDescendantsOfKind(SyntaxKind.NewExpression)]) {
    const kind = classify(node);
    if (kind !== undefined) nodes.push({ kind, node });
  }
  nodes.sort((a, b) => a.node.getStart() - b.node.getStart());
  if (target.occurrence !== undefined && nodes[target.occurrence]) return { kind: 'found', shape: nodes[target.occurrence]! };
  const spans = nodes.filter(({ node }) => node.getStartLineNumber() <= target.line && target.line <= node.getEndLineNumber()).sort((a, b) => b.node.getStart() - a.node.getStart());
  if (spans[0]) return { kind: 'found', shape: spans[0], occurrence: nodes.indexOf(spans[0]) };
  const wired = nodes.filter(({ node }) => mentionsAction(wiringOf(node), target.codeName));
  if (wired.length === 1) return { kind: 'found', shape: wired[0]!, occurrence: nodes.indexOf(wired[0]!) };
  if (anyLine && nodes.length === 1) return { kind: 'found', shape: nodes[0]!, occurrence: 0 };
  if (nodes.length === 0) return { kind: 'unknown' };
  return { kind: 'stale', reason: `${target.file} changed since inspection: no registration at line ${target.line} (found at line ${nodes.map((n) => n.node.getStartLineNumber()).join(', ')})` };
}

/**
 * Where apply's wiring of a registration lives: the registration itself, or for a decorator (NestJS `@Process()`)
 * the `<method>Once` field nestBullProcess.ts puts next to the decorated method.
 */
export function wiringOf(node: TriggerCall): Node {
  const method = Node.isDecorator(node.getParent()) ? node.getParent()!.getParent() : undefined;
  // @nestjs/bullmq's @Processor() decorates the class: its wiring is the `processOnce` field.
  if (method && Node.isClassDeclaration(method)) return method.getMember('processOnce') ?? node;
  if (!method || !Node.isMethodDeclaration(method)) return node;
  const cls = method.getParent();
  return (Node.isClassDeclaration(cls) ? cls.getMember(`${method.getName()}Once`) : undefined) ?? method;
}

/** Whether the registration already passes `ACTIONS.<codeName>` (apply's own wiring, or the user's). */
export function mentionsAction(node: Node, codeName: string): boolean {
  return node.getDescendantsOfKind(SyntaxKind.PropertyAccessExpression).some((p) => p.getText() === `ACTIONS.${codeName}`);
}

/** One indentation step of the file, as sourceFile.ts chose it for the project. */
const indentUnit = (sf: SourceFile) => sf.getProject().manipulationSettings.getIndentationText();

/** The indentation of the line `node` starts on (ts-morph's getIndentationText answers for the node, not the line). */
export function lineIndent(node: Node): string {
  const text = node.getSourceFile().getFullText();
  const start = text.lastIndexOf('\n', node.getStart() - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/**
 * Replaces `node` with `text` as raw text (ts-morph's replaceWithText re-indents continuation lines by its own rule):
 * `text` carries absolute indentation. Every wrapped node of the file is forgotten; callers find nodes again.
 */
export function replaceRaw(sf: SourceFile, node: Node, text: string): void {
  sf.replaceText([node.getStart(), node.getEnd()], text);
}

/**
 * `wrapper({ …fields, handle: <handler> })` in place of the handler argument `at`, laid out like hand-written code:
 * one field a line, one level deeper than the line the argument starts on, the handler's own lines moved with them.
 */
export function wrapperCall(sf: SourceFile, at: Node, wrapper: string, fields: ReadonlyArray<[string, string]>, prefix = ''): string {
  const unit = indentUnit(sf);
  const base = lineIndent(at);
  const lines = fields.map(([name, value]) => `${base}${unit}${name}: ${value.replace(/\n(?=[^\n])/g, `\n${unit}`)},`);
  return `${wrapper}(${prefix}{\n${lines.join('\n')}\n${base}})`;
}

/** The imports every trigger wiring needs: the app's instance and the action settings. */
export function ensureTriggerImports(sf: SourceFile, context: TransformContext, extra: ReadonlyArray<[module: string, name: string]>): string | undefined {
  for (const [module, name] of [['instance', 'idempotency'], ['index', 'ACTIONS'], ...extra] as const) {
    if (!context.scaffoldModules.has(module) && module !== 'instance') return `the scaffold has no ${module}.ts (run \`idempotency-builder generate\` with this action in the config)`;
    if (!ensureNamedImport(sf, context.style.specifier(module), name)) return `the file already has its own binding named "${name}"`;
  }
  return undefined;
}

type ConsumerKind = 'bullmq' | 'bull' | 'nest-bull' | 'nest-bullmq' | 'kafkajs' | 'amqplib' | 'nats';

/**
 * `new Worker(queue, processor, opts)`, legacy Bull `queue.process(name?, concurrency?, handler)`, the `Process()`
 * decorator call of a NestJS Bull processor method, `consumer.run({ eachMessage })`, `channel.consume(q, fn)`,
 * JetStream `consume()`.
 */
export function classifyConsumer(node: TriggerCall): ConsumerKind | undefined {
  const name = calleeName(node);
  const args = node.getArguments();
  const mentions = (module: RegExp) => module.test(node.getSourceFile().getFullText());
  if (name === 'Process' && Node.isDecorator(node.getParent()) && mentions(/['"]@nestjs\/bull['"]/)) return 'nest-bull';
  // @nestjs/bullmq: the class is the processor (a WorkerHost), its process() method the handler.
  if (name === 'Processor' && Node.isDecorator(node.getParent()) && Node.isClassDeclaration(node.getParent()!.getParent()) && mentions(/['"]@nestjs\/bullmq['"]/)) return 'nest-bullmq';
  // Only the 'bull' package (never bullmq, whose Worker has no process()): the handler is the last argument.
  if (name === 'process' && Node.isPropertyAccessExpression(node.getExpression()) && args.length >= 1 && args.length <= 3 && !Node.isObjectLiteralExpression(args[args.length - 1]!) && mentions(/['"]bull['"]/)) return 'bull';
  // worker_threads has a Worker too: BullMQ's is imported from 'bullmq' and takes (queue, processor).
  if (Node.isNewExpression(node)) return name === 'Worker' && args.length >= 2 && mentions(/['"]bullmq(\/[^'"]*)?['"]/) && !Node.isObjectLiteralExpression(args[1]!) ? 'bullmq' : undefined;
  if (name === 'run' && args.length === 1 && Node.isObjectLiteralExpression(args[0]!) && args[0].getProperty('eachMessage')) return 'kafkajs';
  // amqplib's channel.consume(queue, handler), in a file that uses amqplib (not the project's own `queue.consume`).
  if (name === 'consume' && args.length >= 2 && Node.isPropertyAccessExpression(node.getExpression()) && mentions(/['"](amqplib|amqplib\/callback_api|amqp-connection-manager)['"]/)) return 'amqplib';
  if (name === 'consume' && args.length <= 1 && mentions(/['"](nats|@nats-io\/[^'"]+)['"]/)) return 'nats';
  return undefined;
}

const isFunction = (node: Node | undefined): node is ArrowFunction | FunctionExpression => node !== undefined && (Node.isArrowFunction(node) || Node.isFunctionExpression(node));

/**
 * A handler apply can pass as `handle`: an inline function or a name, taking the message alone. `extra` names what
 * a second parameter would be in this library (BullMQ's lock token, Bull's done callback).
 */
function handlerProblem(handler: Expression | undefined, wrapper = 'bullmqProcessor', extra = 'e.g. a lock token'): string | undefined {
  if (!handler) return 'it has no handler argument';
  if (isFunction(handler)) return handler.getParameters().length > 1 ? `its handler takes more than the message (${extra}); the wrapper passes (message, context)` : undefined;
  if (Node.isIdentifier(handler) || Node.isPropertyAccessExpression(handler)) return undefined;
  if (Node.isStringLiteral(handler) || Node.isNoSubstitutionTemplateLiteral(handler)) return `it runs a sandboxed processor file; wrap the function exported there with ${wrapper}()`;
  return 'its handler is an expression apply cannot pass on as is';
}

/** Whether an inline handler returns a value of its own (the wrapped one returns { duplicate } instead). */
export const returnsValue = (handler: Node): boolean =>
  handler.getDescendantsOfKind(SyntaxKind.ReturnStatement).some((r) => r.getExpression() !== undefined && r.getFirstAncestor((a) => isFunction(a) || Node.isMethodDeclaration(a)) === handler);

/** What apply says about a processor that returned a value, once wrapped. */
/**
 * A handler whose body ends in a try/catch that only logs (no throw in the catch): a message it fails on returns
 * normally, so the wrapper records it as handled and acknowledges it. The broker moved past it before too; now a
 * redelivery of it (a replay from an earlier offset, a re-added job) is skipped as well. Said with the catch's line:
 * rethrow there and the failed message is retried.
 */
export function swallowStep(target: WiringTarget, handler: Node): { action: string; file: string; line: number; reason: string } | undefined {
  const body = isFunction(handler) || Node.isMethodDeclaration(handler) ? handler.getBody() : undefined;
  const last = body && Node.isBlock(body) ? body.getStatements().at(-1) : undefined;
  const clause = last && Node.isTryStatement(last) ? last.getCatchClause() : undefined;
  if (!clause) return undefined;
  const own = (node: Node) => node.getFirstAncestor((a) => isFunction(a) || Node.isMethodDeclaration(a) || Node.isFunctionDeclaration(a)) === handler;
  if (clause.getBlock().getDescendantsOfKind(SyntaxKind.ThrowStatement).some(own)) return undefined;
  const line = clause.getStartLineNumber();
  return { action: target.action, file: target.file, line, reason: `the handler's catch (line ${line}) logs a failure and returns: the message then counts as handled, its record is COMPLETED and a redelivery is skipped; rethrow in the catch (after logging) so a failed message is retried` };
}

export const returnValueStep = (target: WiringTarget, line: number) => ({ action: target.action, file: target.file, line, reason: "the processor returned a value: the wrapped processor's return value is now { duplicate }; keep results you read from job.returnvalue in your own store" });

/** Producers of a Bull or BullMQ queue: the same work must be the same job. */
export const producerStep = (target: WiringTarget, line: number, module: 'bullmq' | 'bull') => ({
  action: target.action,
  file: target.file,
  line,
  reason: `producers should add jobs with jobId: jobIdFor(ACTIONS.${target.codeName}, { …business identity }) from consumers/${module}.ts and attempts > 1, so a re-added job is the same job`,
});

/**
 * A named handler is passed as `(message) => handler(message)`: the wrapper calls handle(message, context), and a
 * function that takes a second parameter of its own (BullMQ's token) must not receive the context in its place.
 */
function handleText(handler: Expression): string {
  if (isFunction(handler)) return handler.getText();
  const base = lineIndent(handler);
  return `async (message) => {\n${base}  await ${handler.getText()}(message);\n${base}}`;
}

/**
 * Inspection records a consumer registered through the project's own function (`this.kafka.subscribe('topic', group,
 * async (p) => …)`) at that call: `this.kafka.subscribe(…)` when a call with a function argument starts on the line
 * and what it is called on comes from the project (a relative import or a class of this file), not a broker package.
 */
function wrapperCallAt(sf: SourceFile, line: number): string | undefined {
  const call = sf.getDescendantsOfKind(SyntaxKind.CallExpression).find((c) => c.getStartLineNumber() === line && c.getArguments().some((a) => isFunction(a)));
  const callee = call?.getExpression();
  if (!callee || !(Node.isIdentifier(callee) || Node.isPropertyAccessExpression(callee)) || !projectOwned(sf, callee)) return undefined;
  return `\`${callee.getText().replace(/\s+/g, '')}(…)\``;
}

function projectOwned(sf: SourceFile, callee: Node): boolean {
  const fromProject = (name: string | undefined): boolean => {
    if (!name) return false;
    const declaration = sf.getImportDeclarations().find((d) => d.getDefaultImport()?.getText() === name || d.getNamespaceImport()?.getText() === name || d.getNamedImports().some((n) => (n.getAliasNode() ?? n.getNameNode()).getText() === name));
    if (declaration) return /^(\.|[@~#]\/)/.test(declaration.getModuleSpecifierValue());
    return sf.getClass(name) !== undefined || sf.getFunction(name) !== undefined;
  };
  if (Node.isIdentifier(callee)) return fromProject(callee.getText());
  if (!Node.isPropertyAccessExpression(callee)) return false;
  const receiver = callee.getExpression();
  if (Node.isIdentifier(receiver)) {
    const init = sf.getVariableDeclaration(receiver.getText())?.getInitializer();
    // A parameter typed with the project's port (`constructor(queue: Queue)`): the type says whose it is.
    const parameter = receiver.getFirstAncestor((a) => Node.isFunctionLikeDeclaration(a) && a.getParameters().some((p) => p.getName() === receiver.getText()));
    const typed = parameter && Node.isFunctionLikeDeclaration(parameter) ? parameter.getParameter(receiver.getText())?.getTypeNode()?.getText() : undefined;
    return fromProject(init && Node.isNewExpression(init) ? init.getExpression().getText() : (typed ?? receiver.getText()));
  }
  // `this.kafka`: the type of the field or constructor parameter it names.
  if (!Node.isPropertyAccessExpression(receiver) || receiver.getExpression().getKind() !== SyntaxKind.ThisKeyword) return false;
  const cls = callee.getFirstAncestorByKind(SyntaxKind.ClassDeclaration);
  const field = receiver.getName();
  const typed = cls?.getProperty(field)?.getTypeNode() ?? cls?.getConstructors()[0]?.getParameter(field)?.getTypeNode();
  return fromProject(typed?.getText());
}

/**
 * Queue consumers: the handler the broker client calls becomes the `handle` of the scaffold's wrapper for that
 * client, keyed by the message id, acknowledging only after the record is COMPLETED. BullMQ and kafkajs are wired;
 * amqplib and JetStream handlers acknowledge messages themselves, which the wrappers must own: listed manual.
 */
export const wireConsumer: Transform = (sf, target, context) => {
  const located = locateTrigger(sf, target, context.anyLine, classifyConsumer);
  if (located.kind === 'stale') return { edits: [], manual: [], stale: located.reason };
  if (located.kind === 'unknown') {
    const wrapper = wrapperCallAt(sf, target.line);
    if (wrapper) {
      return manualOnly(target, `the consumer is registered through ${wrapper}, the project's own wrapper around its broker client, which apply does not rewrite: wrap the handler passed there with idempotentHandler() from consumers/handler.ts, with messageIdOf reading the id the wrapper hands the handler or, when it hands only the payload, a business key from it (the wrapper's caller cannot see the broker's message id), and let the wrapper acknowledge only after the handler returns`);
    }
    return manualOnly(target, 'the consumer is registered in a shape apply does not recognise (BullMQ new Worker, Bull queue.process, NestJS @Process or WorkerHost process(), kafkajs run({ eachMessage })); wrap its handler with idempotentHandler() from consumers/handler.ts, keyed by the message id, and acknowledge after it returns');
  }
  const { shape } = located;
  const line = shape.node.getStartLineNumber();
  if (shape.kind === 'nest-bull' || shape.kind === 'nest-bullmq') return wireNestBullProcess(sf, target, context, shape.node);
  if (mentionsAction(shape.node, target.codeName)) return { edits: [], manual: shape.kind === 'bullmq' || shape.kind === 'bull' ? [producerStep(target, line, shape.kind)] : [] };
  const core = 'idempotency.core';
  const action = `ACTIONS.${target.codeName}`;
  const out: TransformOutcome = { edits: [], manual: [] };
  if (shape.kind === 'bullmq') {
    const handler = shape.node.getArguments()[1] as Expression | undefined;
    const problem = handlerProblem(handler);
    if (problem || !handler) return manualOnly(target, `new Worker(...) at line ${line}: ${problem}; pass bullmqProcessor({ core, action: ${action}, handle }) from consumers/bullmq.ts as the processor by hand`, line);
    // Read before any edit: its line is the one the user has.
    const swallowed = swallowStep(target, handler);
    if (!context.scaffoldModules.has('consumers/bullmq')) return manualOnly(target, 'the scaffold has no consumers/bullmq.ts (no consumer in the design is on bullmq: neither the broker inspection found for it nor the one in the config, or the generated target for this database has no queue-consumer runtime); wrap the processor as TRIGGERS.md / the document shows', line);
    const missing = ensureTriggerImports(sf, context, [['consumers/bullmq', 'bullmqProcessor']]);
    if (missing) return manualOnly(target, `new Worker(...) at line ${line} not wired: ${missing}`, line);
    const returns = isFunction(handler) && returnsValue(handler);
    replaceRaw(sf, handler, wrapperCall(sf, handler, 'bullmqProcessor', [['core', core], ['action', action], ['handle', handleText(handler)]]));
    out.edits.push({ action: target.action, file: target.file, summary: `wraps the BullMQ worker's processor (line ${line}) in bullmqProcessor: one execution per job id, a re-run job finds its record and returns` });
    if (returns) out.manual.push(returnValueStep(target, line));
    if (swallowed) out.manual.push(swallowed);
    out.manual.push(producerStep(target, line, 'bullmq'));
    return out;
  }
  if (shape.kind === 'bull') {
    const args = shape.node.getArguments();
    const handler = args[args.length - 1] as Expression | undefined;
    const problem = handlerProblem(handler, 'bullProcessor', "Bull's done callback: make it async (job) => …");
    if (problem || !handler) return manualOnly(target, `queue.process(...) at line ${line}: ${problem}; pass bullProcessor({ core, action: ${action}, handle }) from consumers/bull.ts as the handler by hand`, line);
    const swallowed = swallowStep(target, handler);
    if (!context.scaffoldModules.has('consumers/bull')) return manualOnly(target, 'the scaffold has no consumers/bull.ts (no consumer in the design is on bull: neither the broker inspection found for it nor the one in the config, or the generated target for this database has no queue-consumer runtime); wrap the handler as TRIGGERS.md / the document shows', line);
    const missing = ensureTriggerImports(sf, context, [['consumers/bull', 'bullProcessor']]);
    if (missing) return manualOnly(target, `queue.process(...) at line ${line} not wired: ${missing}`, line);
    const returns = isFunction(handler) && returnsValue(handler);
    // Bull picks the promise form by the handler's arity: the wrapper takes the job alone, so it is never given done.
    replaceRaw(sf, handler, wrapperCall(sf, handler, 'bullProcessor', [['core', core], ['action', action], ['handle', handleText(handler)]]));
    out.edits.push({ action: target.action, file: target.file, summary: `wraps the Bull queue.process handler (line ${line}) in bullProcessor: one execution per job id, a stalled or re-added job finds its record and returns` });
    if (returns) out.manual.push(returnValueStep(target, line));
    if (swallowed) out.manual.push(swallowed);
    out.manual.push(producerStep(target, line, 'bull'));
    return out;
  }
  if (shape.kind === 'kafkajs') {
    const options = shape.node.getArguments()[0]!;
    if (!Node.isObjectLiteralExpression(options)) return manualOnly(target, 'kafkajs run() options are not an object literal', line);
    const property = options.getProperty('eachMessage');
    const consumer = Node.isPropertyAccessExpression(shape.node.getExpression()) ? (shape.node.getExpression() as PropertyAccessExpression).getExpression().getText() : undefined;
    const handler = property && Node.isPropertyAssignment(property) ? property.getInitializer() : undefined;
    const problem = property && Node.isMethodDeclaration(property) ? 'eachMessage is a method; make it a property (eachMessage: async (payload) => …)' : handlerProblem(handler);
    if (problem || !handler || !consumer) return manualOnly(target, `consumer.run(...) at line ${line}: ${problem ?? 'the consumer is not a plain name'}; pass kafkaEachMessage(consumer, { core, action: ${action}, handle }) from consumers/kafka.ts as eachMessage by hand, with autoCommit: false`, line);
    const swallowed = swallowStep(target, handler);
    if (!context.scaffoldModules.has('consumers/kafka')) return manualOnly(target, 'the scaffold has no consumers/kafka.ts (no consumer in the design is on kafka: neither the broker inspection found for it nor the one in the config, or the generated target for this database has no queue-consumer runtime); wrap eachMessage as the document shows', line);
    const missing = ensureTriggerImports(sf, context, [['consumers/kafka', 'kafkaEachMessage']]);
    if (missing) return manualOnly(target, `consumer.run(...) at line ${line} not wired: ${missing}`, line);
    replaceRaw(sf, handler, wrapperCall(sf, property!, 'kafkaEachMessage', [['core', core], ['action', action], ['handle', handleText(handler)]], `${consumer}, `));
    // The wrapper commits each offset after the record is COMPLETED; kafkajs' own auto-commit would move past a failed one.
    const fresh = sf.getDescendantsOfKind(SyntaxKind.CallExpression).find((c) => mentionsAction(c, target.codeName) && calleeName(c) === 'run');
    const literal = fresh?.getArguments()[0];
    if (literal && Node.isObjectLiteralExpression(literal) && !literal.getProperty('autoCommit')) literal.insertPropertyAssignment(0, { name: 'autoCommit', initializer: 'false' });
    out.edits.push({ action: target.action, file: target.file, summary: `wraps kafkajs eachMessage (line ${line}) in kafkaEachMessage: one execution per message id, offsets committed after completion (autoCommit: false)` });
    if (swallowed) out.manual.push(swallowed);
    return out;
  }
  const wrapper = shape.kind === 'amqplib' ? 'consumeIdempotently(channel, { queue, core, action, handle }) from consumers/amqplib.ts' : 'natsHandler({ core, action, handle }) from consumers/nats.ts';
  return manualOnly(target, `the ${shape.kind} handler at line ${line} acknowledges messages itself, and the wrapper must own ack/nack (ack after the record is COMPLETED): replace the registration with ${wrapper} and remove the handler's own ack calls`, line);
};
