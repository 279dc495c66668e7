import { Node, type SourceFile } from 'ts-morph';
import type { WiringTarget } from '../types.js';
import { ensureTriggerImports, lineIndent, type TriggerCall, mentionsAction, wiringOf, producerStep, returnsValue, returnValueStep, swallowStep, wrapperCall } from './consumer.js';
import { manualOnly, type TransformContext, type TransformOutcome } from './context.js';

/**
 * NestJS Bull (`@nestjs/bull`): a `@Process()` method of a `@Processor()` class. The method's body moves into the
 * `handle` of a `bullProcessor` the class builds once (a field next to the method, so `this` is still the instance
 * and the wrapper's state lives as long as the processor), and the method awaits it:
 *
 *   private readonly sendReceiptOnce = bullProcessor({ core, action: ACTIONS.x, handle: async (job: Job<T>) => { …body } });
 *   @Process('receipt') async sendReceipt(job: Job<T>) { return this.sendReceiptOnce(job); }
 *
 * The decorator, the method's name and signature stay, so Nest registers the same handler for the same job name.
 */
export function wireNestBullProcess(sf: SourceFile, target: WiringTarget, context: TransformContext, decoratorCall: TriggerCall): TransformOutcome {
  const method = decoratorCall.getParent()?.getParent();
  const line = decoratorCall.getStartLineNumber();
  if (!method || !Node.isMethodDeclaration(method)) return manualOnly(target, `@Process() at line ${line} does not decorate a method`, line);
  const cls = method.getParent();
  if (!Node.isClassDeclaration(cls) || !cls.getDecorator('Processor')) return manualOnly(target, `@Process() at line ${line} is not in a @Processor() class`, line);
  const name = method.getName();
  const field = `${name}Once`;
  const existing = cls.getMember(field);
  if (existing && mentionsAction(wiringOf(decoratorCall), target.codeName)) return { edits: [], manual: [producerStep(target, line, 'bull')] };
  if (existing) return manualOnly(target, `the processor class already has a member named ${field}; wrap the @Process() method at line ${line} with bullProcessor() from consumers/bull.ts by hand`, line);
  const by = `; build bullProcessor({ core, action: ACTIONS.${target.codeName}, handle }) from consumers/bull.ts once in the class and await it from the method`;
  const [param, ...more] = method.getParameters();
  if (!param || more.length > 0 || !Node.isIdentifier(param.getNameNode())) return manualOnly(target, `the @Process() method at line ${line} does not take the job alone (a done callback, a destructured job)${by}`, line);
  if (!method.isAsync()) return manualOnly(target, `the @Process() method at line ${line} is not async; make it async${by}`, line);
  const body = method.getBody();
  if (!body || !Node.isBlock(body)) return manualOnly(target, `the @Process() method at line ${line} has no body`, line);
  if (!context.scaffoldModules.has('consumers/bull')) return manualOnly(target, 'the scaffold has no consumers/bull.ts (no consumer in the design is on bull: neither the broker inspection found for it nor the one in the config, or the generated target for this database has no queue-consumer runtime); wrap the @Process() method as TRIGGERS.md / the document shows', line);

  const returns = returnsValue(method);
  const swallowed = swallowStep(target, method);
  const indent = lineIndent(method);
  const unit = sf.getProject().manipulationSettings.getIndentationText();
  const semi = context.style.semicolons ? ';' : '';
  const handle = `async (${param.getText()}) => ${body.getText()}`;
  const wrapper = wrapperCall(sf, method, 'bullProcessor', [['core', 'idempotency.core'], ['action', `ACTIONS.${target.codeName}`], ['handle', handle]]);
  const insertAt = method.getStart(true);
  const bodySpan = [body.getStart(), body.getEnd()] as const;
  const textBefore = sf.getFullText();
  // Later span first: the field goes in above the method, which would shift the body.
  // Returned like bullProcessor's own { duplicate } (job.returnvalue), unless the method declares a return type of its own.
  const call = `${method.getReturnTypeNode() ? 'await' : 'return'} this.${field}(${param.getName()})${semi}`;
  sf.replaceText([bodySpan[0], bodySpan[1]], `{\n${indent}${unit}${call}\n${indent}}`);
  sf.insertText(insertAt, `private readonly ${field} = ${wrapper}${semi}\n\n${indent}`);
  const missing = ensureTriggerImports(sf, context, [['consumers/bull', 'bullProcessor']]);
  if (missing) {
    sf.replaceWithText(textBefore);
    return manualOnly(target, `the @Process() method at line ${line} not wired: ${missing}`, line);
  }
  const out: TransformOutcome = { edits: [{ action: target.action, file: target.file, summary: `runs the @Process() method ${name} (line ${line}) through bullProcessor: one execution per job id, a stalled or re-added job finds its record and returns` }], manual: [] };
  if (returns) out.manual.push(returnValueStep(target, line));
  if (swallowed) out.manual.push(swallowed);
  out.manual.push(producerStep(target, line, 'bull'));
  return out;
}
