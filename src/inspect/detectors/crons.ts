import { ts } from 'ts-morph';
import { accessChain, decoratorCall, decoratorsOf, displayName, isFunctionLike, objectProperty, stringValue, unwrap } from '../parse/astHelpers.js';
import { functionName } from '../parse/functionKey.js';
import type { CronFinding } from '../types.js';
import type { Detector, FileContext, FileFacts } from './detectorTypes.js';

/** Scheduled work: every tick can overlap the previous one or be re-run after a crash. */
export const crons: Detector = {
  name: 'crons',
  mentions: /node-cron|['"]cron['"]|CronJob|node-schedule|scheduleJob|@nestjs\/schedule|setInterval|repeat|upsertJobScheduler|\.every\(|toad-scheduler|createFunction|croner|Cron\(/,
  detect(ctx, facts) {
    for (const call of ctx.index.calls) {
      const callee = call.expression;
      const origin = ctx.originOf(ts.isPropertyAccessExpression(callee) ? callee.expression : callee);
      const method = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '';
      const args = call.arguments;
      if (method === 'schedule' && origin?.module === 'node-cron') {
        push(ctx, facts, call, 'node-cron', stringValue(args[0], ctx.index.consts), stringValue(objectProperty(args[2], 'name')) ?? callbackName(args[1]), args[1]);
      } else if (origin?.module === 'node-schedule' && (origin.imported === 'scheduleJob' || (method === 'scheduleJob' && (origin.imported === '*' || origin.imported === 'default')))) {
        // scheduleJob([name,] rule, callback)
        const named = args.length >= 3 && stringValue(args[0]) !== undefined;
        const rule = named ? args[1] : args[0];
        push(ctx, facts, call, 'node-schedule', ruleText(rule, ctx), named ? stringValue(args[0]) : callbackName(args[args.length - 1]), args[args.length - 1]);
      } else if (method === 'createFunction' && ts.isPropertyAccessExpression(callee) && args.length >= 2) {
        // Inngest scheduled functions: createFunction({ id }, { cron: '0 * * * *' }, handler).
        const cron = stringValue(objectProperty(args[1], 'cron'), ctx.index.consts);
        const id = stringValue(objectProperty(args[0], 'id'), ctx.index.consts) ?? stringValue(objectProperty(args[0], 'name'), ctx.index.consts);
        if (cron) push(ctx, facts, call, 'inngest', cron, id);
      } else if ((method === 'job' && origin?.module === 'cron') || (origin?.module === 'croner' && (origin.imported === 'Cron' || origin.imported === 'default'))) {
        push(ctx, facts, call, origin.module, stringValue(args[0], ctx.index.consts), callbackName(args[args.length - 1]), args[args.length - 1]);
      } else if (method === 'from' && ctx.originOf(callee)?.module === 'cron') {
        const opts = args[0];
        push(ctx, facts, call, 'cron', stringValue(objectProperty(opts, 'cronTime'), ctx.index.consts), stringValue(objectProperty(opts, 'name')) ?? callbackName(objectProperty(opts, 'onTick')), objectProperty(opts, 'onTick'));
      } else if (method === 'setInterval' && ts.isIdentifier(callee) && args.length >= 2 && isTopLevelish(call) && !isUiFile(ctx) && !clearedInItsFunction(call)) {
        const ms = args[1] ? intervalText(args[1], ctx) : undefined;
        push(ctx, facts, call, 'setInterval', ms, callbackName(args[0]), args[0]);
      } else if (method === 'add' && args.length >= 3 && objectProperty(args[2], 'repeat')) {
        const repeat = objectProperty(args[2], 'repeat');
        const pattern = stringValue(objectProperty(repeat, 'pattern') ?? objectProperty(repeat, 'cron'), ctx.index.consts) ?? everyText(objectProperty(repeat, 'every'), ctx);
        push(ctx, facts, call, 'bullmq', pattern, stringValue(args[0], ctx.index.consts), undefined, displayName(args[0], ctx.index.consts));
      } else if (method === 'upsertJobScheduler' && args.length >= 2) {
        const pattern = stringValue(objectProperty(args[1], 'pattern'), ctx.index.consts) ?? everyText(objectProperty(args[1], 'every'), ctx);
        push(ctx, facts, call, 'bullmq', pattern, stringValue(args[0], ctx.index.consts), undefined, displayName(args[0], ctx.index.consts));
      } else if (method === 'every' && /agenda/i.test(accessChain(ts.isPropertyAccessExpression(callee) ? callee.expression : callee).join('.')) && args.length >= 2) {
        push(ctx, facts, call, 'agenda', stringValue(args[0], ctx.index.consts), stringValue(args[1], ctx.index.consts));
      }
    }
    for (const expr of ctx.index.news) {
      const origin = ctx.originOf(expr.expression);
      if ((origin?.module === 'croner' && (origin.imported === 'Cron' || origin.imported === 'default'))) {
        const args = expr.arguments ?? [];
        push(ctx, facts, expr, 'croner', stringValue(args[0], ctx.index.consts), callbackName(args[args.length - 1]), args[args.length - 1]);
      } else if (origin?.module === 'cron' && origin.imported === 'CronJob') {
        const args = expr.arguments ?? [];
        push(ctx, facts, expr, 'cron', stringValue(args[0], ctx.index.consts), callbackName(args[1]), args[1]);
      }
    }
    recordNestSchedule(ctx, facts);
  },
};

/** `label`: how to show a job whose name is computed (`{definition.id}`), for its id only. */
function push(ctx: FileContext, facts: FileFacts, node: ts.Node, scheduler: string, schedule: string | undefined, name: string | undefined, callback?: ts.Expression | ts.MethodDeclaration, label?: string): void {
  const finding: CronFinding = {
    kind: 'cron',
    id: `${scheduler} ${name ?? label ?? schedule ?? 'unnamed'}`,
    file: ctx.rel,
    line: ctx.line(node),
    scheduler,
    ...(schedule ? { schedule } : {}),
    ...(name ? { name } : {}),
    ...(callback && isInert(callback) ? { inert: true as const } : {}),
  };
  facts.findings.push(finding);
}

/**
 * A callback written in place that can change nothing: its body only logs (console, a logger) or is empty. No call
 * to anything else, no `new`, no assignment, no `await`; anything the inspector cannot see through counts as work.
 */
function isInert(callback: ts.Expression | ts.MethodDeclaration): boolean {
  const node = ts.isMethodDeclaration(callback) ? callback : unwrap(callback);
  if (!isFunctionLike(node) || !node.body) return false;
  let inert = true;
  const visit = (n: ts.Node): void => {
    if (!inert) return;
    if (ts.isCallExpression(n)) {
      const name = accessChain(n.expression).join('.');
      if (!/^(console|logger|log|this\.logger)\.\w+$/.test(name)) inert = false;
    } else if (ts.isNewExpression(n) || ts.isAwaitExpression(n) || ts.isYieldExpression(n) || ts.isDeleteExpression(n) || ts.isTaggedTemplateExpression(n)) {
      inert = false;
    } else if (ts.isBinaryExpression(n) && n.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && n.operatorToken.kind <= ts.SyntaxKind.LastAssignment) {
      inert = false;
    } else if ((ts.isPrefixUnaryExpression(n) || ts.isPostfixUnaryExpression(n)) && (n.operator === ts.SyntaxKind.PlusPlusToken || n.operator === ts.SyntaxKind.MinusMinusToken)) {
      inert = false;
    }
    ts.forEachChild(n, visit);
  };
  visit(node.body);
  return inert;
}

/** The job's name: a referenced function, the single call inside an arrow, or the enclosing named function. */
function callbackName(expr: ts.Expression | undefined): string | undefined {
  if (!expr) return undefined;
  const node = unwrap(expr);
  if (ts.isIdentifier(node)) return node.text;
  if (ts.isPropertyAccessExpression(node)) return accessChain(node).join('.');
  if (isFunctionLike(node)) {
    const own = functionName(node);
    if (own) return own;
    const body = node.body;
    const statements = body && ts.isBlock(body) ? body.statements : body ? [body] : [];
    const calls: string[] = [];
    const visit = (n: ts.Node): void => {
      if (ts.isCallExpression(n)) {
        // `this.processOutbox().catch(log)`: the job is the call the promise handlers hang on, not `.catch`.
        if (ts.isPropertyAccessExpression(n.expression) && /^(catch|then|finally)$/.test(n.expression.name.text) && ts.isCallExpression(unwrap(n.expression.expression))) {
          visit(unwrap(n.expression.expression));
          return;
        }
        const chain = accessChain(n.expression).map((p) => p.replace(/\(\)$/, ''));
        const name = chain.filter((p) => p !== 'this').join('.');
        if (!name || /^(console|logger|log)\b/.test(name)) return;
        // Not the job's work: a call on an expression (`new Date().toISOString()` gives '?.toISOString') or on a
        // built-in (Date.now, JSON.stringify); its arguments may still hold the call that is.
        if (!chain.includes('?') && !/^(Date|JSON|Math|Object|Array|Promise|String|Number)\b/.test(name)) {
          calls.push(name);
          return;
        }
      }
      ts.forEachChild(n, visit);
    };
    statements.forEach(visit);
    return calls[0];
  }
  return undefined;
}

function scheduleText(expr: ts.Expression | undefined, ctx: FileContext): string | undefined {
  if (!expr) return undefined;
  return stringValue(expr, ctx.index.consts) ?? unwrap(expr).getText(ctx.sf).replace(/\s+/g, ' ').slice(0, 80);
}

/** node-schedule rules: a cron string, an object spec, or a RecurrenceRule built field by field. */
function ruleText(expr: ts.Expression | undefined, ctx: FileContext): string | undefined {
  if (!expr) return undefined;
  const node = unwrap(expr);
  const init = ts.isIdentifier(node) ? ctx.index.consts.get(node.text) : undefined;
  const created = init && ts.isNewExpression(unwrap(init)) ? ctx.originOf((unwrap(init) as ts.NewExpression).expression) : undefined;
  if (ts.isIdentifier(node) && created?.module === 'node-schedule' && created.imported === 'RecurrenceRule') {
    const fields: string[] = [];
    const visit = (n: ts.Node): void => {
      if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isPropertyAccessExpression(n.left) && ts.isIdentifier(n.left.expression) && n.left.expression.text === node.text) {
        fields.push(`${n.left.name.text}=${n.right.getText(ctx.sf).replace(/\s+/g, ' ')}`);
      }
      ts.forEachChild(n, visit);
    };
    visit(ctx.sf);
    return `RecurrenceRule ${fields.join(' ')}`.trim();
  }
  return scheduleText(expr, ctx);
}

function intervalText(expr: ts.Expression, ctx: FileContext): string {
  const node = unwrap(expr);
  if (ts.isNumericLiteral(node)) return `every ${node.text}ms`;
  return `every ${node.getText(ctx.sf).replace(/\s+/g, ' ')}`;
}

function everyText(expr: ts.Expression | undefined, ctx: FileContext): string | undefined {
  return expr ? intervalText(expr, ctx) : undefined;
}

/** setInterval inside a request handler or a class method that polls a UI is not a scheduler; module level or a start() function is. */
/** A React component file (`.jsx`/`.tsx`, or one importing react): its timers poll a UI, they schedule no work. */
function isUiFile(ctx: FileContext): boolean {
  return /\.(jsx|tsx)$/.test(ctx.rel) || [...ctx.index.imports.values()].some((b) => b.module === 'react' || b.module === 'preact' || b.module === 'vue');
}

/**
 * `const t = setInterval(…)` inside a function that also calls `clearInterval(t)`: a timer for the length of one call
 * (a heartbeat while an activity runs, a progress tick), not a schedule of work.
 */
function clearedInItsFunction(call: ts.CallExpression): boolean {
  const declaration = call.parent;
  if (!ts.isVariableDeclaration(declaration) || !ts.isIdentifier(declaration.name)) return false;
  const name = declaration.name.text;
  let fn: ts.Node | undefined = declaration.parent;
  while (fn && !isFunctionLike(fn)) fn = fn.parent;
  if (!fn) return false;
  let cleared = false;
  const visit = (node: ts.Node): void => {
    if (cleared) return;
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'clearInterval' && node.arguments.some((a) => ts.isIdentifier(a) && a.text === name)) cleared = true;
    else ts.forEachChild(node, visit);
  };
  visit(fn);
  return cleared;
}

function isTopLevelish(call: ts.CallExpression): boolean {
  let depth = 0;
  for (let current = call.parent; current; current = current.parent) if (isFunctionLike(current)) depth++;
  return depth <= 2;
}

function recordNestSchedule(ctx: FileContext, facts: FileFacts): void {
  if (![...ctx.index.imports.values()].some((b) => b.module === '@nestjs/schedule')) return;
  for (const cls of ctx.index.classes) {
    for (const member of cls.members) {
      if (!ts.isMethodDeclaration(member)) continue;
      for (const d of decoratorsOf(member).map(decoratorCall)) {
        const origin = d ? ctx.index.imports.get(d.name) : undefined;
        if (!d || origin?.module !== '@nestjs/schedule') continue;
        const name = stringValue(objectProperty(d.args[1], 'name')) ?? `${cls.name?.text ?? '?'}.${member.name.getText(ctx.sf)}`;
        if (origin.imported === 'Cron') push(ctx, facts, member, '@nestjs/schedule', scheduleText(d.args[0], ctx), name, member);
        else if (origin.imported === 'Interval') {
          const ms = d.args.length === 2 ? d.args[1] : d.args[0];
          const named = d.args.length === 2 ? stringValue(d.args[0]) : undefined;
          push(ctx, facts, member, '@nestjs/schedule', ms ? intervalText(ms, ctx) : undefined, named ?? name, member);
        }
      }
    }
  }
}
