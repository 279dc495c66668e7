import path from 'node:path';
import { ts } from 'ts-morph';
import { isFunctionLike, lineOf, propertyName, unwrap } from '../../inspect/parse/astHelpers.js';
import type { ImportBinding } from '../../inspect/parse/indexSource.js';
import { fileContext, providerCalls, type ProviderCall } from '../providerCalls.js';
import type { ProjectReport, Rule, RuleReport, SourceContext } from '../types.js';
import { volatilePart } from '../volatile.js';
import { functionLabel, innermostFunction, localInitializer } from '../walk.js';

/** Providers compare the parameters of a repeated key (Stripe, Adyen, PayPal): a parameter taken from the clock makes the retry fail or, without a key, differ. */
export const providerParamsChangeBetweenRetries: Rule = {
  id: 'provider-params-change-between-retries',
  severity: 'warning',
  title: 'Provider parameter changes between retries',
  description:
    'A request parameter is computed from the server clock or a random source. A retry sends different parameters: ' +
    'with an idempotency key the provider rejects it (the key was used with other parameters), without one the two attempts ' +
    'create objects that differ, so neither side can tell they were the same intent.',
  fix:
    'Send a value that is the same on every attempt: a time from the handler context\'s `startedAt` (when the key was first ' +
    'claimed) or from the intent\'s stored data (the order\'s createdAt), never from the clock; a label or reference derived ' +
    'from the idempotency key. `apply` makes these edits in the handlers it wires.',
  docsAnchor: 'finding-provider-params-change-between-retries',
  mentions: /stripe|adyen|paypal|square|mollie|paymentIntents|checkout\.sessions/i,
  checkFile(ctx) {
    const out: RuleReport[] = [];
    const helpers = clockHelpersOf(ctx);
    const pending: PendingHelperParam[] = [];
    const imports = fileContext(ctx).index.imports;
    for (const c of providerCalls(ctx)) {
      for (const param of volatileParams(c)) {
        const rule = stableParamRule(param.name);
        out.push({
          node: param.property,
          message: `${c.provider} ${c.operation} parameter \`${param.name}\` comes from \`${param.volatile.getText()}\`, so every retry sends a different value.`,
          ...(rule ? { fix: `\`${param.name}\` ${rule.reason}` } : {}),
        });
      }
      // A value made by a helper that reads the clock or a random source: this file's own helpers now, imported ones
      // once every file has been scanned (checkProject).
      for (const param of helperParams(c, imports)) {
        const local = helpers.find((h) => h.name === param.callee);
        if (local) out.push(helperReport(c, param, local, ctx.rel));
        else if (param.imported) pending.push(pendingOf(ctx, c, param, param.imported));
      }
    }
    pendingParams.set(ctx, pending);
    return out;
  },
  scanFile(ctx) {
    clockHelpersOf(ctx);
  },
  checkProject(ctx) {
    const out: ProjectReport[] = [];
    for (const source of ctx.sources) {
      for (const p of pendingParams.get(source) ?? []) {
        const helper = ctx.sources.filter((s) => modulePathMatches(source.rel, p.module, s.rel)).flatMap((s) => (clockHelpers.get(s) ?? []).filter((h) => h.name === p.imported).map((h) => ({ ...h, rel: s.rel })))[0];
        if (!helper) continue;
        const { message, fix } = helperText(p.provider, p.operation, p.name, p.text, helper, helper.rel);
        out.push({ file: source.rel, line: p.line, message, fix, evidence: p.evidence, ...(p.enclosingFunction ? { enclosingFunction: p.enclosingFunction } : {}) });
      }
    }
    return out;
  },
};

/**
 * What a per-attempt parameter is, by its name: the rule's fix text and apply's stable-params transform read the same
 * table. A label (metadata, a description) only has to be the same on every attempt, and a merchant reference only
 * unique per intent as well, so apply derives both from the idempotency key; a time the provider acts on (an expiry, a
 * trial end) counts from the key's start time (`startedAt`), which apply substitutes for a clock read.
 */
export const STABLE_PARAM_RULES: ReadonlyArray<{ kind: 'label' | 'reference' | 'time'; test: RegExp; reason: string }> = [
  {
    kind: 'time',
    test: /(^|_)(at|date|time|end|start|until|deadline|anchor)$|[a-z](At|Date|Time|End|Start|Until|Deadline|Anchor)$|^expir|^(trial|period|billing_cycle)/,
    reason:
      'is a time the provider acts on: count it from `idempotencyOf(request).startedAt` (when the key was first claimed, the same on every attempt) ' +
      'or from a time stored with the intent, never from the clock; `apply` rewrites a clock read there in the handlers it wires, and leaves one mixed with a random value to you.',
  },
  {
    kind: 'label',
    test: /^(metadata|description|statement_descriptor(_suffix)?|statementDescriptor(Suffix)?|client_reference_id|clientReferenceId|custom_?[iI]d|soft_?[dD]escriptor|note(_to_payer|ToPayer)?|memo|label)$/,
    reason: 'is a label: derive it from the idempotency key (the same on every attempt of the intent) instead of the clock or a random id; `apply` does this in the handlers it wires.',
  },
  {
    // The merchant's own name for this one intent (Adyen's reference, Stripe's transfer_group, an invoice id): a clock
    // or random value there only had to be unique per intent, which the derived key is, and stays on every attempt.
    kind: 'reference',
    test: /^(reference|merchantReference|merchantOrderReference|merchant_reference|transfer_group|transferGroup|invoice_id|invoiceId)$/,
    reason: 'is the merchant reference of this intent: derive it from the idempotency key (unique per intent and the same on every attempt) instead of the clock or a random id; `apply` does this in the handlers it wires.',
  },
];

export function stableParamRule(name: string): (typeof STABLE_PARAM_RULES)[number] | undefined {
  return STABLE_PARAM_RULES.find((rule) => rule.test.test(name));
}

/**
 * The request's own parameters whose value changes per attempt, with the first part that does: in the literal the call
 * sends and in the literals its variable is given later in the function (`params = { ...params, subscription_data }`),
 * looking into nested objects (`subscription_data.trial_end`) unless the outer name already says what the value is
 * (`metadata` is a label whatever it holds).
 */
export function volatileParams(c: Pick<ProviderCall, 'params' | 'reassigned'>): Array<{ name: string; property: ts.PropertyAssignment | ts.ShorthandPropertyAssignment; volatile: ts.Node }> {
  const out: Array<{ name: string; property: ts.PropertyAssignment | ts.ShorthandPropertyAssignment; volatile: ts.Node }> = [];
  for (const { name, property, value } of requestProperties(c)) {
    const volatile = volatilePart(value);
    if (volatile) out.push({ name, property, volatile });
  }
  return out;
}

type RequestProperty = { name: string; property: ts.PropertyAssignment | ts.ShorthandPropertyAssignment; value: ts.Node };

/** Every leaf property of the request literals (see volatileParams), with its value. */
function requestProperties(c: Pick<ProviderCall, 'params' | 'reassigned'>): RequestProperty[] {
  const out: RequestProperty[] = [];
  const visit = (obj: ts.ObjectLiteralExpression, depth: number): void => {
    for (const prop of obj.properties) {
      if (!ts.isPropertyAssignment(prop) && !ts.isShorthandPropertyAssignment(prop)) continue;
      const name = propertyName(prop.name) ?? prop.name.getText();
      const value = ts.isPropertyAssignment(prop) ? prop.initializer : prop.name;
      const inner = unwrap(value);
      if (depth < 3 && ts.isObjectLiteralExpression(inner) && !stableParamRule(name)) visit(inner, depth + 1);
      else out.push({ name, property: prop, value });
    }
  };
  for (const obj of [...(c.params ? [c.params] : []), ...(c.reassigned ?? [])]) visit(obj, 0);
  return out;
}

/** A function of a file whose result reads the clock or a random source (`const trialEnd = () => … new Date() …`). */
interface ClockHelper {
  name: string;
  /** The per-attempt read as written, and its 1-based line. */
  read: string;
  line: number;
}

/** A parameter whose value is a call of a plain function (`trial_end: trialEndOf(price)`), by the function's name. */
interface HelperParam {
  name: string;
  property: ts.PropertyAssignment | ts.ShorthandPropertyAssignment;
  callee: string;
  /** The call as written. */
  text: string;
  /** Set when the function is imported: where from, and its exported name. */
  imported?: ImportBinding;
}

/** A helper parameter whose function lives in another file: plain data, so the tree may go before checkProject. */
interface PendingHelperParam {
  provider: string;
  operation: string;
  name: string;
  text: string;
  module: string;
  imported: string;
  line: number;
  evidence: string;
  enclosingFunction?: string;
}

const clockHelpers = new WeakMap<SourceContext, ClockHelper[]>();
const pendingParams = new WeakMap<SourceContext, PendingHelperParam[]>();
/** Files that cannot read a clock or a random source are not walked for helpers. */
const MENTIONS_VOLATILE = /Date|now\(|random|uuid|nanoid|cuid|ulid|dayjs|moment|createId|generateId|ObjectId/;

/** The file's module-level functions (declarations and `const f = () => …`) whose returned value is per attempt. */
function clockHelpersOf(source: SourceContext): ClockHelper[] {
  const cached = clockHelpers.get(source);
  if (cached) return cached;
  const out: ClockHelper[] = [];
  if (MENTIONS_VOLATILE.test(source.text)) {
    for (const statement of source.sf.statements) {
      const named: Array<[string, ts.FunctionLikeDeclaration]> = [];
      if (ts.isFunctionDeclaration(statement) && statement.name && statement.body) named.push([statement.name.text, statement]);
      if (ts.isVariableStatement(statement)) {
        for (const d of statement.declarationList.declarations) {
          const init = d.initializer && unwrap(d.initializer);
          if (ts.isIdentifier(d.name) && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) named.push([d.name.text, init]);
        }
      }
      for (const [name, fn] of named) {
        const read = returnedVolatile(fn);
        if (read) out.push({ name, read: read.getText(source.sf), line: lineOf(source.sf, read) });
      }
    }
  }
  clockHelpers.set(source, out);
  return out;
}

/** The first per-attempt read a function's returned values are made of, followed through its locals. */
function returnedVolatile(fn: ts.FunctionLikeDeclaration): ts.Node | undefined {
  const body = fn.body;
  if (!body) return undefined;
  if (!ts.isBlock(body)) return rootRead(body);
  let found: ts.Node | undefined;
  const visit = (node: ts.Node): void => {
    if (found || isFunctionLike(node)) return;
    if (ts.isReturnStatement(node) && node.expression) found = rootRead(node.expression);
    else ts.forEachChild(node, visit);
  };
  ts.forEachChild(body, visit);
  return found;
}

/** The clock or random call behind a value: `trialEnd.getTime()` → `new Date()` through `const trialEnd = new Date(now.getTime() + …)`. */
function rootRead(expr: ts.Node, depth = 0): ts.Node | undefined {
  const part = volatilePart(expr);
  if (!part || depth > 3 || !ts.isIdentifier(part)) return part;
  const init = localInitializer(part);
  return init ? (rootRead(init, depth + 1) ?? part) : part;
}

/** Parameters whose value is a call of a plain function, not itself per attempt (those are volatileParams). */
function helperParams(c: ProviderCall, imports: ReadonlyMap<string, ImportBinding>): HelperParam[] {
  const out: HelperParam[] = [];
  for (const { name, property, value } of requestProperties(c)) {
    if (volatilePart(value)) continue;
    const call = firstPlainCall(value);
    if (!call) continue;
    const callee = (call.expression as ts.Identifier).text;
    const imported = imports.get(callee);
    out.push({ name, property, callee, text: call.getText(), ...(imported && imported.imported !== '*' ? { imported } : {}) });
  }
  return out;
}

/** The first call of a bare identifier in a value (`Math.floor(trialEnd(p))` gives `trialEnd(p)`). */
function firstPlainCall(value: ts.Node): ts.CallExpression | undefined {
  let found: ts.CallExpression | undefined;
  const visit = (node: ts.Node): void => {
    if (found || isFunctionLike(node)) return;
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) found = node;
    else ts.forEachChild(node, visit);
  };
  visit(value);
  return found;
}

function pendingOf(ctx: SourceContext, c: ProviderCall, param: HelperParam, imported: ImportBinding): PendingHelperParam {
  const start = param.property.getStart(ctx.sf);
  const line = ctx.sf.getLineAndCharacterOfPosition(start).line;
  const fn = functionLabel(innermostFunction(param.property));
  return {
    provider: c.provider,
    operation: c.operation,
    name: param.name,
    text: param.text,
    module: imported.module,
    imported: imported.imported === 'default' ? param.callee : imported.imported,
    line: line + 1,
    evidence: ctx.text.split('\n')[line]?.trim() ?? '',
    ...(fn ? { enclosingFunction: fn } : {}),
  };
}

function helperReport(c: ProviderCall, param: HelperParam, helper: ClockHelper, rel: string): RuleReport {
  return { node: param.property, ...helperText(c.provider, c.operation, param.name, param.text, helper, rel) };
}

function helperText(provider: string, operation: string, name: string, text: string, helper: ClockHelper, rel: string): { message: string; fix: string } {
  const rule = stableParamRule(name);
  const what = rule?.kind === 'time' ? 'is a time the provider acts on' : rule?.kind === 'label' ? 'is a label' : rule?.kind === 'reference' ? 'is the merchant reference of this intent' : 'must be the same on every attempt';
  const instead = rule?.kind === 'time' ? 'the key\'s start time (`startedAt` from the idempotency context, the same on every attempt) or a time stored with the intent' : 'a value derived from the idempotency key or stored with the intent';
  return {
    message: `${provider} ${operation} parameter \`${name}\` comes from \`${text}\`, and ${helper.name} reads \`${helper.read}\` (${rel}:${helper.line}), so every retry sends a different value.`,
    fix: `\`${name}\` ${what}: give ${helper.name} ${instead} to work from instead of reading \`${helper.read}\` itself. apply leaves this edit to you, since the helper is shared code.`,
  };
}

/**
 * Whether the module specifier `spec`, imported by the file `from`, names the file `candidate`: relative specifiers
 * resolved, path aliases (`@/utils/helpers`, `~/lib/time`, `src/lib/time`) by the path after the alias, with or
 * without an extension or an index file.
 */
export function modulePathMatches(from: string, spec: string, candidate: string): boolean {
  const target = candidate.replace(/\.(d\.)?[cm]?[jt]sx?$/, '').replace(/\/index$/, '');
  const wanted = spec.replace(/\.[cm]?[jt]sx?$/, '').replace(/\/index$/, '');
  if (wanted.startsWith('.')) return path.posix.join(path.posix.dirname(from), wanted) === target;
  const tail = wanted.replace(/^[@~#]\/?/, '');
  return tail !== '' && (target === tail || target.endsWith(`/${tail}`));
}
