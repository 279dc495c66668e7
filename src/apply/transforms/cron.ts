import { Node, SyntaxKind, type Decorator, type Expression, type ObjectLiteralExpression, type SourceFile } from 'ts-morph';
import { fitStatement } from '../sourceFile.js';
import { calleeName, ensureTriggerImports, locateTrigger, lineIndent, mentionsAction, replaceRaw, returnsValue, type TriggerCall } from './consumer.js';
import { manualOnly, type Transform, type TransformContext, type TransformOutcome } from './context.js';
import type { WiringTarget } from '../types.js';

const GUARD_NAME = 'cronGuard';

/** A field that fires on every value, or every n-th from 0: `*` → 1, `*\/15` → 15, `0/15` → 15; else undefined. */
function step(field: string): number | undefined {
  if (field === '*') return 1;
  const match = /^(?:\*|0)\/(\d+)$/.exec(field);
  return match ? Number(match[1]) : undefined;
}

const fixed = (field: string) => /^\d+$/.test(field);

/**
 * The fixed period of a cron expression, when it has one: the guard's slot is floor(fire time / period), so every
 * instance firing the same run computes the same slot. Only schedules with even gaps have one (every n seconds,
 * minutes or hours dividing the next unit, daily, weekly); `0 9 1 * *` (months differ) or `0 9,17 * * *` (uneven)
 * does not, and is left to the user with the scheduler's own fire date.
 */
export function cronIntervalMs(expression: string): number | undefined {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return undefined;
  const [second, minute, hour, dom, month, dow] = fields.length === 6 ? fields : ['0', ...fields];
  if (dom !== '*' || month !== '*') return undefined;
  const divides = (n: number, unit: number) => n > 0 && unit % n === 0;
  if (dow !== '*') {
    return fixed(dow!) && fixed(hour!) && fixed(minute!) && fixed(second!) ? 7 * 86_400_000 : undefined;
  }
  const s = step(second!);
  if (s !== undefined) return minute === '*' && hour === '*' && divides(s, 60) ? s * 1000 : undefined;
  if (!fixed(second!)) return undefined;
  const m = step(minute!);
  if (m !== undefined) return hour === '*' && divides(m, 60) ? m * 60_000 : undefined;
  if (!fixed(minute!)) return undefined;
  const h = step(hour!);
  if (h !== undefined) return divides(h, 24) ? h * 3_600_000 : undefined;
  return fixed(hour!) ? 86_400_000 : undefined;
}

const NEST_UNITS: Record<string, [ms: number, next: number]> = { SECOND: [1000, 60], MINUTE: [60_000, 60], HOUR: [3_600_000, 24] };

/**
 * The period of a @nestjs/schedule `CronExpression` member, read from its name: EVERY_30_SECONDS, EVERY_5_MINUTES,
 * EVERY_HOUR, EVERY_DAY_AT_1AM, MONDAY_TO_FRIDAY_AT_9AM (one run a day at most, so a day is its slot), EVERY_WEEK.
 * Undefined for monthly and quarterly ones, whose gaps differ.
 */
export function cronExpressionMs(member: string): number | undefined {
  const every = /^EVERY_(?:(\d+)_)?(SECOND|MINUTE|HOUR)S?$/.exec(member);
  if (every) {
    const [unit, next] = NEST_UNITS[every[2]!]!;
    const n = every[1] === undefined ? 1 : Number(every[1]);
    return n > 0 && next % n === 0 ? n * unit : undefined;
  }
  if (/^(EVERY_DAY_AT_\w+|EVERY_WEEKDAY|EVERY_WEEKEND|MONDAY_TO_FRIDAY_AT_\w+)$/.test(member)) return 86_400_000;
  return member === 'EVERY_WEEK' ? 604_800_000 : undefined;
}

type CronKind = 'node-cron' | 'node-schedule' | 'cron' | 'cron-from' | 'interval';

export function classifyCron(node: TriggerCall): CronKind | undefined {
  const name = calleeName(node);
  const args = node.getArguments();
  const text = node.getSourceFile().getFullText();
  if (Node.isNewExpression(node)) return name === 'CronJob' && args.length >= 2 ? 'cron' : undefined;
  if (name === 'schedule' && args.length >= 2 && /['"]node-cron['"]/.test(text)) return 'node-cron';
  if (name === 'scheduleJob' && args.length >= 2 && /['"]node-schedule['"]/.test(text)) return 'node-schedule';
  // `setInterval(pollOutbox, POLL_INTERVAL_MS)`: the period is the second argument.
  if (Node.isCallExpression(node) && Node.isIdentifier(node.getExpression()) && name === 'setInterval' && args.length >= 2) return 'interval';
  if (name === 'from' && Node.isPropertyAccessExpression(node.getExpression()) && node.getExpression().getText().endsWith('CronJob.from') && args.length === 1 && Node.isObjectLiteralExpression(args[0]!)) return 'cron-from';
  return undefined;
}

/** `const cronGuard = new CronGuard({ core: idempotency.core });` after the imports, once per file. */
function ensureGuard(sf: SourceFile): boolean {
  const existing = sf.getVariableDeclaration(GUARD_NAME);
  if (existing) return /^new CronGuard\(/.test(existing.getInitializer()?.getText() ?? '');
  const imports = sf.getStatements().filter((s) => Node.isImportDeclaration(s) || (Node.isVariableStatement(s) && /=\s*require\(/.test(s.getText())));
  const index = imports.length === 0 ? 0 : imports[imports.length - 1]!.getChildIndex() + 1;
  sf.insertStatements(index, [fitStatement(sf, `\n// One run per job and scheduled slot across instances (the idempotency store holds the claim).\nconst ${GUARD_NAME} = new CronGuard({ core: idempotency.core });`)]);
  return true;
}

/** The job function, made fit for the guard's `work(context, slot) => Promise<void>`; undefined when it cannot be. */
function workText(handler: Expression): string | undefined {
  if (Node.isArrowFunction(handler) || Node.isFunctionExpression(handler)) {
    if (handler.getParameters().length > 0) return undefined;
    if (!handler.isAsync()) handler.setIsAsync(true);
    return handler.getText();
  }
  const base = lineIndent(handler);
  if (Node.isIdentifier(handler) || Node.isPropertyAccessExpression(handler)) return `async () => {\n${base}  await ${handler.getText()}();\n${base}}`;
  return undefined;
}

/** A number written as literals and + - * / (`5 * 60_000`, `60 * 1000`); undefined for anything else. */
function numberValue(node: Node): number | undefined {
  if (Node.isNumericLiteral(node)) return node.getLiteralValue();
  if (Node.isParenthesizedExpression(node)) return numberValue(node.getExpression());
  if (!Node.isBinaryExpression(node)) return undefined;
  const left = numberValue(node.getLeft());
  const right = numberValue(node.getRight());
  if (left === undefined || right === undefined) return undefined;
  const op = node.getOperatorToken().getKind();
  const value = op === SyntaxKind.AsteriskToken ? left * right : op === SyntaxKind.PlusToken ? left + right : op === SyntaxKind.MinusToken ? left - right : op === SyntaxKind.SlashToken && right !== 0 ? left / right : undefined;
  return value !== undefined && Number.isSafeInteger(value) ? value : undefined;
}

const stringOf = (node: Node | undefined) => (node && (Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node)) ? node.getLiteralValue() : undefined);

/** Names of functions that set jobs up once per process: `startJobs(db)`, `registerCrons(app)`, `onModuleInit()`. */
const SETUP_NAME = /^(?:start|init|initiali[sz]e|setup|setUp|register|bootstrap|boot|main|configure|load|schedule(?:Jobs?|Crons?|Tasks?|All)?$|on(?:Module|Application)(?:Init|Bootstrap))/;

/** A function that sets jobs up once: named so, or the module's own export (`module.exports = (app) => { … }`). */
function setsUpOnce(fn: Node): boolean {
  const holder = fn.getParent();
  const name = Node.isFunctionDeclaration(fn) || Node.isMethodDeclaration(fn) ? fn.getName() : holder && Node.isVariableDeclaration(holder) ? holder.getName() : undefined;
  if (name !== undefined) return SETUP_NAME.test(name);
  return !!holder && (Node.isExportAssignment(holder) || (Node.isBinaryExpression(holder) && /^(?:module\.)?exports(?:\.\w+)?$/.test(holder.getLeft().getText())));
}

/**
 * The parameters of the functions the scheduling call sits in that the job function uses: each call of such a function
 * schedules a job of its own, from its own values (`scheduleEmail(email)`). Locals are not counted (a bootstrap's
 * `const db = await connect()` is one per process, as the job is), nor the parameters of a function that sets jobs
 * up once (`startJobs(db)`, a module exporting `(app) => { … }`).
 */
function capturedParameters(work: Node, scheduling: Node): string[] {
  if (!(Node.isArrowFunction(work) || Node.isFunctionExpression(work))) return [];
  const enclosing = new Set<string>();
  for (const fn of scheduling.getAncestors()) {
    if (!Node.isFunctionLikeDeclaration(fn) || fn === work || setsUpOnce(fn)) continue;
    for (const parameter of fn.getParameters()) {
      const name = parameter.getNameNode();
      if (Node.isIdentifier(name)) enclosing.add(name.getText());
      else for (const element of name.getDescendantsOfKind(SyntaxKind.BindingElement)) enclosing.add(element.getName());
    }
  }
  if (enclosing.size === 0) return [];
  const own = new Set([...work.getParameters().map((p) => p.getName()), ...work.getDescendantsOfKind(SyntaxKind.VariableDeclaration).map((d) => d.getName())]);
  const used = work.getDescendantsOfKind(SyntaxKind.Identifier).filter((id) => {
    const parent = id.getParent();
    // `x.email` and `{ email: … }` name a property, not the parameter.
    if (parent && (Node.isPropertyAccessExpression(parent) || Node.isPropertyAssignment(parent)) && parent.getNameNode() === id) return false;
    return enclosing.has(id.getText()) && !own.has(id.getText());
  });
  return [...new Set(used.map((id) => id.getText()))];
}

/** `300_000` for 5 minutes: readable in the diff. */
const msLiteral = (ms: number) => String(ms).replace(/\B(?=(\d{3})+(?!\d))/g, '_');

/**
 * Scheduled jobs: the job function the scheduler calls goes through the scaffold's CronGuard (cron/guard.ts), so one
 * run per (job name, scheduled slot) happens across instances: node-cron's schedule(), node-schedule's scheduleJob()
 * (the fire date is the slot), cron's new CronJob / CronJob.from, and setInterval (the slot is the period the fire
 * falls in), and NestJS @Cron() / @Interval() methods (wireNestSchedule). Unknown shapes are manual.
 */
export const wireCron: Transform = (sf, target, context) => {
  const located = locateTrigger(sf, target, context.anyLine, classifyCron);
  if (located.kind === 'stale') return { edits: [], manual: [], stale: located.reason };
  const job = JSON.stringify(target.codeName).slice(1, -1);
  const quote = context.style.quote === 'double' ? '"' : "'";
  const action = `ACTIONS.${target.codeName}`;
  if (located.kind === 'unknown') {
    const nest = sf.getDescendantsOfKind(SyntaxKind.Decorator).find((d) => (d.getName() === 'Cron' || d.getName() === 'Interval') && d.getStartLineNumber() <= target.line + 1 && target.line - 1 <= d.getParentOrThrow().getEndLineNumber());
    if (nest && /['"]@nestjs\/schedule['"]/.test(sf.getFullText())) return wireNestSchedule(sf, target, context, nest, { action, job, quote });
    return manualOnly(target, `the job is scheduled in a shape apply does not recognise (node-cron schedule, node-schedule scheduleJob, new CronJob, setInterval, NestJS @Cron / @Interval); run its body through CronGuard from cron/guard.ts, keyed by job name + scheduled slot`);
  }
  const { shape } = located;
  const line = shape.node.getStartLineNumber();
  if (mentionsAction(shape.node, target.codeName)) return { edits: [], manual: [] };
  const args = shape.node.getArguments();
  let handler: Expression | undefined;
  let expression: string | undefined;
  let options: ObjectLiteralExpression | undefined;
  if (shape.kind === 'node-cron') {
    handler = args[1] as Expression;
    expression = stringOf(args[0]);
  } else if (shape.kind === 'node-schedule') {
    handler = args[args.length - 1] as Expression;
  } else if (shape.kind === 'cron') {
    handler = args[1] as Expression;
    expression = stringOf(args[0]);
  } else if (shape.kind === 'cron-from') {
    options = args[0] as ObjectLiteralExpression;
    const onTick = options.getProperty('onTick');
    handler = onTick && Node.isPropertyAssignment(onTick) ? onTick.getInitializer() : undefined;
    expression = stringOf(options.getProperty('cronTime')?.getLastChild());
  }
  // setInterval's period, as a number when it is one (`5 * 60_000`), else the expression itself when reading it again
  // has no effect (`POLL_INTERVAL_MS`, `config.interval`): the guard and the timer then agree at run time.
  let period: string | undefined;
  if (shape.kind === 'interval') {
    if (args.length > 2) return manualOnly(target, `the setInterval at line ${line} passes arguments to its callback; call intervalTask(cronGuard, ${action}, '${job}', <period>, work) from cron/guard.ts with a work function that closes over them`, line);
    handler = args[0] as Expression;
    const ms = args[1] as Expression;
    const value = numberValue(ms);
    period = value !== undefined && value > 0 ? msLiteral(value) : Node.isIdentifier(ms) || (Node.isPropertyAccessExpression(ms) && /^[\w$.]+$/.test(ms.getText())) ? ms.getText() : undefined;
    if (period === undefined) return manualOnly(target, `the period of the setInterval at line ${line} (${ms.getText().slice(0, 60)}) is computed where it is passed; put it in a const, give it to setInterval and to intervalTask(cronGuard, ${action}, '${job}', <that const>, work) from cron/guard.ts`, line);
  }
  // `new CronJob(CronExpression.EVERY_5_SECONDS, …)`: @nestjs/schedule's named expressions, read by their names.
  const schedule = shape.kind === 'cron-from' ? options?.getProperty('cronTime')?.getLastChild() : shape.kind === 'node-cron' || shape.kind === 'cron' ? args[0] : undefined;
  const member = schedule && Node.isPropertyAccessExpression(schedule) && schedule.getExpression().getText() === 'CronExpression' ? schedule.getName() : undefined;
  const interval = expression !== undefined ? cronIntervalMs(expression) : member !== undefined ? cronExpressionMs(member) : undefined;
  if (shape.kind !== 'node-schedule' && shape.kind !== 'interval' && interval === undefined) {
    return manualOnly(target, `the schedule at line ${line} (${expression === undefined ? 'not a string literal' : 'no fixed period'}) has no slot apply can compute; call guard.run(${action}, '${job}', slot, work) with the scheduled time as the slot`, line);
  }
  if (!handler) return manualOnly(target, `the job at line ${line} has no function apply can wrap`, line);
  // A job scheduled inside a function, from that call's values (`scheduleEmail(email) { new CronJob(…, () =>
  // send(email)) }`), is one job per call: a key per job name and slot would let only one of them run per slot.
  const captured = capturedParameters(handler, shape.node);
  if (captured.length > 0) return manualOnly(target, `the job at line ${line} is scheduled inside a function and its work uses that function's ${captured.map((name) => `\`${name}\``).join(', ')}: if each call schedules a job of its own, a guard keyed by job name and slot would let only one of them run; key each by those values too (guard.run(${action}, \`${job}:<those values>\`, slot, work)), or wire it as a single job by hand if the function runs once`, line);
  if (!context.scaffoldModules.has('cron/guard')) return manualOnly(target, 'the scaffold has no cron/guard.ts (the generated target for this database has no scheduled-job runtime, or the scaffold predates this action: run generate); guard the job as the document shows', line);
  const helper = shape.kind === 'node-cron' ? 'nodeCronTask' : shape.kind === 'node-schedule' ? 'nodeScheduleTask' : shape.kind === 'interval' ? 'intervalTask' : 'cronOnTick';
  if (Node.isArrowFunction(handler) || Node.isFunctionExpression(handler) ? handler.getParameters().length > 0 : !(Node.isIdentifier(handler) || Node.isPropertyAccessExpression(handler))) {
    return manualOnly(target, `the job function at line ${line} takes parameters (or is not a function); pass ${helper}(cronGuard, ${action}, '${job}', …, work) by hand`, line);
  }
  const missing = ensureTriggerImports(sf, context, [['cron/guard', 'CronGuard'], ['cron/guard', helper]]);
  if (missing) return manualOnly(target, `the job at line ${line} not wired: ${missing}`, line);
  if (!ensureGuard(sf)) return manualOnly(target, `the file already declares ${GUARD_NAME} as something else`, line);
  const work = workText(handler)!;
  const every = period !== undefined ? `, ${period}` : interval !== undefined ? `, ${msLiteral(interval)}` : '';
  replaceRaw(sf, handler, `${helper}(${GUARD_NAME}, ${action}, ${quote}${job}${quote}${every}, ${work})`);
  const out: TransformOutcome = { edits: [], manual: [] };
  const kind = shape.kind === 'cron-from' ? 'cron' : shape.kind === 'interval' ? 'setInterval' : shape.kind;
  out.edits.push({ action: target.action, file: target.file, summary: `runs the ${kind} job at line ${line} through the CronGuard: once per scheduled slot across instances (${helper})` });
  // A failed run no longer rejects into nowhere: intervalTask prints it and the next tick runs.
  if (shape.kind === 'interval') out.manual.push({ action: target.action, file: target.file, line, reason: `a run that fails (or finds the store unreachable, and skips its slot) is printed by intervalTask with the job's name and the next tick goes on; pass your own onError as its sixth argument to report it elsewhere` });
  return out;
};

/**
 * @nestjs/schedule: the decorated method's body runs through the file's CronGuard, once per slot of the decorator's
 * period across instances; the decorator, the method's name and its place in the class stay, so Nest schedules it
 * as before:
 *
 *   @Cron(CronExpression.EVERY_DAY_AT_1AM)
 *   async handleCron() {
 *     await cronGuard.runInterval(ACTIONS.x, 'x', 86_400_000, async () => { …the body… });
 *   }
 */
function wireNestSchedule(sf: SourceFile, target: WiringTarget, context: TransformContext, decorator: Decorator, names: { action: string; job: string; quote: string }): TransformOutcome {
  const { action, job, quote } = names;
  const line = decorator.getStartLineNumber();
  const method = decorator.getParent();
  if (!Node.isMethodDeclaration(method)) return manualOnly(target, `@${decorator.getName()}() at line ${line} does not decorate a method`, line);
  if (mentionsAction(method, target.codeName)) return { edits: [], manual: [] };
  const by = `; return guard.runInterval(${action}, '${job}', <period ms>, async () => { …the method's body… }) from it, with a CronGuard from cron/guard.ts`;
  const args = decorator.getArguments();
  let interval: number | undefined;
  let period: string | undefined;
  if (decorator.getName() === 'Cron') {
    const schedule = args[0];
    const literal = stringOf(schedule);
    interval = literal !== undefined ? cronIntervalMs(literal) : schedule && Node.isPropertyAccessExpression(schedule) && schedule.getExpression().getText() === 'CronExpression' ? cronExpressionMs(schedule.getName()) : undefined;
    if (interval === undefined) return manualOnly(target, `the schedule of @Cron() at line ${line} (${schedule === undefined ? 'none' : schedule.getText().slice(0, 60)}) has no fixed period apply can compute; call guard.run(${action}, '${job}', slot, work) from the method with the scheduled time as the slot`, line);
  } else {
    // @Interval(ms) or @Interval(name, ms): the same period, a number or a constant read again.
    const ms = args.length === 2 ? args[1] : args[0];
    const value = ms && numberValue(ms);
    period = value !== undefined && value > 0 ? msLiteral(value) : ms && (Node.isIdentifier(ms) || (Node.isPropertyAccessExpression(ms) && /^[\w$.]+$/.test(ms.getText()))) ? ms.getText() : undefined;
    if (period === undefined) return manualOnly(target, `the period of @Interval() at line ${line} is computed where it is passed${by}`, line);
  }
  if (method.getParameters().length > 0) return manualOnly(target, `the scheduled method at line ${line} takes parameters${by}`, line);
  if (returnsValue(method)) return manualOnly(target, `the scheduled method at line ${line} returns a value, which the guard's work cannot${by}`, line);
  const body = method.getBody();
  if (!body || !Node.isBlock(body)) return manualOnly(target, `the scheduled method at line ${line} has no body`, line);
  if (!context.scaffoldModules.has('cron/guard')) return manualOnly(target, 'the scaffold has no cron/guard.ts (the generated target for this database has no scheduled-job runtime, or the scaffold predates this action: run generate); guard the job as the document shows', line);
  // A promise the body starts and leaves (`this.repo.deleteMany(…).then(…).catch(…)`): the run ends before its work.
  const floating = body.getStatements().find((statement) => {
    const expression = Node.isExpressionStatement(statement) ? statement.getExpression() : undefined;
    const callee = expression && Node.isCallExpression(expression) ? expression.getExpression() : undefined;
    return callee !== undefined && Node.isPropertyAccessExpression(callee) && /^(then|catch|finally)$/.test(callee.getName());
  });
  const floatingLine = floating?.getStartLineNumber();
  const name = method.getName();
  const kind = decorator.getName();

  const semi = context.style.semicolons ? ';' : '';
  const unit = sf.getProject().manipulationSettings.getIndentationText();
  const indent = lineIndent(method);
  if (method.getReturnTypeNode()?.getText() === 'void') method.setReturnType('Promise<void>');
  if (!method.isAsync()) method.setIsAsync(true);
  const current = method.getBodyOrThrow();
  const work = `async () => ${current.getText().replace(/\n/g, `\n${unit}`)}`;
  const every = period ?? msLiteral(interval!);
  replaceRaw(sf, current, `{\n${indent}${unit}await ${GUARD_NAME}.runInterval(${action}, ${quote}${job}${quote}, ${every}, ${work})${semi}\n${indent}}`);
  const missing = ensureTriggerImports(sf, context, [['cron/guard', 'CronGuard']]);
  if (missing) return manualOnly(target, `the scheduled method at line ${line} not wired: ${missing}`, line);
  if (!ensureGuard(sf)) return manualOnly(target, `the file already declares ${GUARD_NAME} as something else`, line);
  const out: TransformOutcome = { edits: [{ action: target.action, file: target.file, summary: `runs the @${kind}() method ${name} (line ${line}) through the CronGuard: once per scheduled slot across instances` }], manual: [] };
  if (floatingLine !== undefined) {
    out.manual.push({ action: target.action, file: target.file, line: floatingLine, reason: `the method starts a promise it does not await (line ${floatingLine}): the guard counts the slot done when the body returns, before that work ends, and a failure in it never reaches the guard; await it and let its error through, so a failed run releases its slot (another instance firing that slot can still run it) and is counted as failed` });
  }
  return out;
}
