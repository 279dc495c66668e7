import { Node, type ClassDeclaration, type MethodDeclaration, type SourceFile } from 'ts-morph';
import type { WiringTarget } from '../types.js';
import { ensureTriggerImports, lineIndent, type TriggerCall, mentionsAction, wiringOf, producerStep, returnsValue, returnValueStep, swallowStep, wrapperCall } from './consumer.js';
import { manualOnly, type TransformContext, type TransformOutcome } from './context.js';

/** What differs between the two NestJS queue modules: where the handler is, and the scaffold wrapper it goes through. */
interface Flavour {
  readonly module: 'bull' | 'bullmq';
  readonly wrapper: 'bullProcessor' | 'bullmqProcessor';
  /** How apply's messages name the handler. */
  readonly handler: string;
}

/**
 * NestJS queue processors. With `@nestjs/bull`, a `@Process()` method of a `@Processor()` class; with
 * `@nestjs/bullmq`, the `process()` method of a `@Processor()` class extending WorkerHost. The method's body moves into
 * the `handle` of the scaffold's processor wrapper the class builds once (a field next to the method, so `this` is
 * still the instance and the wrapper's state lives as long as the processor), and the method awaits it:
 *
 *   private readonly processOnce = bullmqProcessor({ core, action: ACTIONS.x, handle: async (job: Job<T>) => { …body } });
 *   async process(job: Job<T>) { return this.processOnce(job); }
 *
 * The decorators, the method's name and signature stay, so Nest registers the same handler for the same queue and job.
 */
export function wireNestBullProcess(sf: SourceFile, target: WiringTarget, context: TransformContext, decoratorCall: TriggerCall): TransformOutcome {
  const line = decoratorCall.getStartLineNumber();
  const decorated = decoratorCall.getParent()?.getParent();
  let method: MethodDeclaration | undefined;
  let flavour: Flavour;
  if (decorated && Node.isClassDeclaration(decorated)) {
    flavour = { module: 'bullmq', wrapper: 'bullmqProcessor', handler: 'process() method' };
    method = decorated.getMethod('process');
    if (!method) return manualOnly(target, `the @Processor() class at line ${line} has no process() method (a WorkerHost's handler)`, line);
  } else {
    flavour = { module: 'bull', wrapper: 'bullProcessor', handler: '@Process() method' };
    if (!decorated || !Node.isMethodDeclaration(decorated)) return manualOnly(target, `@Process() at line ${line} does not decorate a method`, line);
    method = decorated;
  }
  const cls = method.getParent();
  if (!Node.isClassDeclaration(cls) || !cls.getDecorator('Processor')) return manualOnly(target, `the ${flavour.handler} at line ${line} is not in a @Processor() class`, line);
  return wireMethod(sf, target, context, { cls, method, flavour, line, decoratorCall });
}

function wireMethod(
  sf: SourceFile,
  target: WiringTarget,
  context: TransformContext,
  at: { cls: ClassDeclaration; method: MethodDeclaration; flavour: Flavour; line: number; decoratorCall: TriggerCall },
): TransformOutcome {
  const { cls, method, flavour, line } = at;
  const name = method.getName();
  const field = `${name}Once`;
  const existing = cls.getMember(field);
  if (existing && mentionsAction(wiringOf(at.decoratorCall), target.codeName)) return { edits: [], manual: [producerStep(target, line, flavour.module)] };
  if (existing) return manualOnly(target, `the processor class already has a member named ${field}; wrap the ${flavour.handler} at line ${line} with ${flavour.wrapper}() from consumers/${flavour.module}.ts by hand`, line);
  const by = `; build ${flavour.wrapper}({ core, action: ACTIONS.${target.codeName}, handle }) from consumers/${flavour.module}.ts once in the class and await it from the method`;
  const [param, ...more] = method.getParameters();
  // BullMQ hands process() a lock token too; a method that never reads it can leave it to the wrapper.
  const unread = (p: (typeof more)[number]) => flavour.module === 'bullmq' && Node.isIdentifier(p.getNameNode()) && !method.getBody()?.getDescendants().some((d) => Node.isIdentifier(d) && d.getText() === p.getName());
  if (!param || !more.every(unread) || !Node.isIdentifier(param.getNameNode())) return manualOnly(target, `the ${flavour.handler} at line ${line} does not take the job alone (a done callback, a lock token it reads, a destructured job)${by}`, line);
  // A Bull handler that is not async may finish through a done callback; BullMQ's process() returns a promise either way.
  if (flavour.module === 'bull' && !method.isAsync()) return manualOnly(target, `the ${flavour.handler} at line ${line} is not async; make it async${by}`, line);
  const body = method.getBody();
  if (!body || !Node.isBlock(body)) return manualOnly(target, `the ${flavour.handler} at line ${line} has no body`, line);
  if (!context.scaffoldModules.has(`consumers/${flavour.module}`)) return manualOnly(target, `the scaffold has no consumers/${flavour.module}.ts (no consumer in the design is on ${flavour.module}: neither the broker inspection found for it nor the one in the config, or the generated target for this database has no queue-consumer runtime); wrap the ${flavour.handler} as TRIGGERS.md / the document shows`, line);

  // Named before the edits below, which forget every node of the file.
  const handlerName = flavour.module === 'bullmq' ? `${cls.getName() ?? 'the processor'}.process()` : `the @Process() method ${name}`;
  const returns = returnsValue(method);
  const swallowed = swallowStep(target, method);
  const indent = lineIndent(method);
  const unit = sf.getProject().manipulationSettings.getIndentationText();
  const semi = context.style.semicolons ? ';' : '';
  const handle = `async (${param.getText()}) => ${body.getText()}`;
  const wrapper = wrapperCall(sf, method, flavour.wrapper, [['core', 'idempotency.core'], ['action', `ACTIONS.${target.codeName}`], ['handle', handle]]);
  const insertAt = method.getStart(true);
  const bodySpan = [body.getStart(), body.getEnd()] as const;
  const textBefore = sf.getFullText();
  // Later span first: the field goes in above the method, which would shift the body.
  // Returned like the wrapper's own { duplicate } (job.returnvalue), unless the method declares a return type of its own
  // other than a promise of anything (WorkerHost's `Promise<any>`).
  const declared = method.getReturnTypeNode()?.getText().replace(/\s+/g, '');
  const call = `${declared !== undefined && !/^Promise<(any|unknown)>$/.test(declared) ? 'await' : 'return'} this.${field}(${param.getName()})${semi}`;
  sf.replaceText([bodySpan[0], bodySpan[1]], `{\n${indent}${unit}${call}\n${indent}}`);
  sf.insertText(insertAt, `private readonly ${field} = ${wrapper}${semi}\n\n${indent}`);
  const missing = ensureTriggerImports(sf, context, [[`consumers/${flavour.module}`, flavour.wrapper]]);
  if (missing) {
    sf.replaceWithText(textBefore);
    return manualOnly(target, `the ${flavour.handler} at line ${line} not wired: ${missing}`, line);
  }
  const out: TransformOutcome = { edits: [{ action: target.action, file: target.file, summary: `runs ${handlerName} (line ${line}) through ${flavour.wrapper}: one execution per job id, a stalled or re-added job finds its record and returns` }], manual: [] };
  if (returns) out.manual.push(returnValueStep(target, line));
  if (swallowed) out.manual.push(swallowed);
  out.manual.push(producerStep(target, line, flavour.module));
  return out;
}
