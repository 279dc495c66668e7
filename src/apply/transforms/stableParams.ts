import { Node, SyntaxKind, ts, type SourceFile } from 'ts-morph';
import { perAttemptKey } from '../../findings/rules/per-attempt-provider-key.js';
import { stableParamRule, volatileParams } from '../../findings/rules/provider-params-change-between-retries.js';
import { providerCalls, type ProviderCall } from '../../findings/providerCalls.js';
import { CLOCK_LIBRARY_CALL, volatileParts } from '../../findings/volatile.js';
import { localInitializer } from '../../findings/walk.js';
import { unwrap } from '../../inspect/parse/astHelpers.js';
import type { PaymentProvider } from '../../inspect/types.js';
import { ensureNamedImport, morphNode } from '../sourceFile.js';
import type { WiringTarget } from '../types.js';
import type { KeyedHandler } from './adyenKey.js';
import type { TransformContext, TransformOutcome } from './context.js';

/** The SDKs whose calls apply keys, so the findings matcher recognises them whatever package.json says. */
export const KEYED_SDKS: ReadonlyMap<string, string> = new Map([['stripe', '*'], ['@adyen/api-library', '*'], ['@paypal/paypal-server-sdk', '*']]);

/** The derived key each provider's call takes, as the providers.ts helper gives it (see stripeKey.ts, adyenKey.ts, paypalKey.ts). */
export const DERIVED_KEY: Partial<Record<PaymentProvider, { helper: string; value: (helperCall: string) => string; options?: boolean }>> = {
  stripe: { helper: 'stripeRequestOptions', value: (call) => `${call}.idempotencyKey`, options: true },
  adyen: { helper: 'adyenIdempotency', value: (call) => `${call}.idempotencyKey` },
  paypal: { helper: 'paypalRequestId', value: (call) => call },
};

/** Modules whose named imports only make per-attempt values: one left unused by the edit is removed. */
const VOLATILE_MODULES = new Set(['crypto', 'node:crypto', 'uuid', 'nanoid', 'ulid', 'cuid', '@paralleldrive/cuid2']);

/** A per-attempt value apply leaves in place: a time the business needs, or an expression it cannot rewrite. */
export interface KeptParam {
  line: number;
  name: string;
  reason: string;
}

export interface StableParamsOutcome extends TransformOutcome {
  /** Listed for the user by planApply from the re-run findings, never edited here. */
  kept: KeptParam[];
}

/**
 * Makes the provider calls inside a protected handler send the same thing on every attempt (the findings
 * per-attempt-provider-key and provider-params-change-between-retries, read with the rules' own detectors):
 * - a key built from randomUUID(), the clock or the retry counter becomes the derived key the keying transforms
 *   insert (`stripeRequestOptions(idempotencyContext)`, `adyenIdempotency(…).idempotencyKey`, `paypalRequestId(…)`);
 * - a label (metadata, description, see STABLE_PARAM_RULES) or a merchant reference (Adyen's reference, Stripe's
 *   transfer_group) built from the clock or a random id gets `providerKey(idempotencyContext)` where that part was
 *   (a reference only where the result provably fits the provider's length limit);
 * - a time the provider acts on (`expires_at: Math.floor(Date.now() / 1000) + 3600`), or any other parameter made
 *   only from clock reads (also `dayjs()`, `moment()`), reads `idempotencyContext.startedAt` (the record's creation time, the same on every
 *   attempt of the key) where it read the clock, also through a local that feeds nothing else; a time made from
 *   anything else per attempt (a random value) stays, and is returned as kept with its reason.
 * A local constant and a crypto/uuid import that the edit leaves unused are removed. Framework-neutral: it works on
 * the calls inside `handler`; `contextName` adds the handler's `idempotencyOf(request)` when an edit needs it.
 */
export function stabiliseProviderCalls(sf: SourceFile, handler: KeyedHandler, target: WiringTarget, context: TransformContext, contextName: () => string | undefined): StableParamsOutcome {
  const out: StableParamsOutcome = { edits: [], manual: [], kept: [] };
  const body = handler.getBody();
  if (!body) return out;
  const source = { rel: sf.getFilePath(), text: sf.getFullText(), sf: sf.compilerNode, dependencies: KEYED_SDKS };
  // Positions are read before any edit: an added import moves everything below it.
  const [from, to] = [body.getStart(), body.getEnd()];
  const inside = (node: ts.Node) => node.getStart(sf.compilerNode) >= from && node.getEnd() <= to;
  const calls = providerCalls(source).filter((c) => DERIVED_KEY[c.provider] && inside(c.call));
  if (calls.length === 0) return out;
  const wrap = (node: ts.Node): Node | undefined => morphNode(body, node);
  const usable = context.scaffoldModules.has('providers');
  // `helper`: the providers.ts export the text calls (none for startedAt); `retains`: the replaced text's names stay
  // in use elsewhere (a rewritten clock read), so no local or import is removed on its account.
  const planned: Array<{ node: Node; helper?: string; retains?: boolean; text: (context: string) => string; summary: string; line: number; failed: string }> = [];
  const byProvider = new Map<PaymentProvider, ProviderCall[]>();
  for (const c of calls) byProvider.set(c.provider, [...(byProvider.get(c.provider) ?? []), c]);

  for (const c of calls) {
    const line = lineOf(sf, c.call);
    const label = `${c.provider} ${c.operation}`;
    const perAttempt = perAttemptKey(c);
    if (perAttempt) {
      const derived = DERIVED_KEY[c.provider]!;
      const siblings = byProvider.get(c.provider)!;
      // One key per call when the handler makes several, as keyProviderCalls numbers them.
      const step = siblings.length > 1 ? `, ${siblings.indexOf(c)}` : '';
      const replacement = usable && inside(perAttempt.key) ? keyReplacement(perAttempt.key, c.provider, wrap) : undefined;
      const failed = `${label} sends a key that is new on every attempt (\`${perAttempt.key.getText()}\`); pass ${derived.helper}(idempotencyOf(request)) from providers.ts instead`;
      if (replacement) {
        planned.push({ node: replacement.node, helper: derived.helper, line, failed, summary: `replaces the per-attempt ${label} key \`${perAttempt.key.getText()}\` with the derived key (line ${line})`, text: (ctx) => replacement.build(`${derived.helper}(${ctx}${step})`) });
      } else {
        out.manual.push({ action: target.action, file: target.file, line, reason: `${failed}; not edited because ${usable ? 'the key is not written inside the handler' : 'the scaffold has no providers.ts'}` });
      }
    }
    for (const param of volatileParams(c)) {
      const rule = stableParamRule(param.name);
      const paramLine = lineOf(sf, param.property);
      if (rule?.kind !== 'label' && rule?.kind !== 'reference') {
        const reads = inside(param.property) ? clockReads(ts.isPropertyAssignment(param.property) ? param.property.initializer : param.property.name, body, inside, wrap) : undefined;
        if (!reads) {
          out.kept.push({ line: paramLine, name: param.name, reason: rule ? `\`${param.name}\` ${rule.reason}` : `apply cannot tell what \`${param.name}\` means: send a value stored with the intent on every attempt` });
          continue;
        }
        const failed = `\`${param.name}\` is computed from the clock (\`${param.volatile.getText()}\`): read idempotencyOf(request).startedAt instead, the same on every attempt`;
        reads.forEach((read, index) =>
          planned.push({ node: read.node, retains: true, line: paramLine, failed, summary: index === 0 ? `takes ${label} parameter \`${param.name}\` from the key's start time (startedAt) instead of \`${param.volatile.getText()}\` (line ${paramLine})` : '', text: read.text }),
        );
        continue;
      }
      const value = ts.isPropertyAssignment(param.property) ? param.property.initializer : param.property.name;
      const parts = usable && inside(param.property) ? labelParts(value, wrap, (name) => references(body, name)) : undefined;
      const failed = `\`${param.name}\` is a ${rule.kind === 'label' ? 'label' : 'merchant reference'} built from \`${param.volatile.getText()}\`: derive it from the idempotency key (providerKey(idempotencyOf(request)) from providers.ts)`;
      if (!parts) {
        out.kept.push({ line: paramLine, name: param.name, reason: failed });
        continue;
      }
      const limit = REFERENCE_LIMIT[c.provider];
      if (rule.kind === 'reference' && limit !== undefined && !fitsLimit(value, parts.length, limit)) {
        out.kept.push({ line: paramLine, name: param.name, reason: `${failed}; not edited because the derived value could exceed ${c.provider}'s ${limit}-character ${param.name}` });
        continue;
      }
      parts.forEach((part, index) =>
        planned.push({ node: part.node, helper: 'providerKey', line: paramLine, failed, summary: index === 0 ? `derives ${label} parameter \`${param.name}\` from the idempotency key instead of \`${param.volatile.getText()}\` (line ${paramLine})` : '', text: (ctx) => (part.shorthand ? `${part.shorthand}: providerKey(${ctx})` : `providerKey(${ctx})`) }),
      );
    }
  }
  if (planned.length === 0) return out;
  // The context and the imports are added only now that an edit is certain: a file apply leaves alone stays byte-equal.
  const name = contextName();
  const helpers = [...new Set(planned.flatMap((p) => (p.helper === undefined ? [] : [p.helper])))];
  const imported = new Map(helpers.map((helper) => [helper, name !== undefined && ensureNamedImport(sf, context.style.specifier('providers'), helper)]));
  const ready = (p: (typeof planned)[number]) => (p.helper === undefined ? name !== undefined : imported.get(p.helper) === true);
  const done = planned.filter(ready);
  for (const p of planned.filter((item) => !ready(item))) {
    if (p.summary !== '') out.manual.push({ action: target.action, file: target.file, line: p.line, reason: `${p.failed}; not edited because the handler has no named request parameter or a name is taken` });
  }
  // Names the replaced text used: locals and imports that only fed a per-attempt value go with it.
  const used = new Set(done.filter((p) => p.retains !== true).flatMap((p) => [p.node, ...p.node.getDescendantsOfKind(SyntaxKind.Identifier)].filter((n) => Node.isIdentifier(n)).map((id) => id.getText())));
  const texts = done.map((p) => ({ node: p.node, text: p.text(name!) }));
  for (const r of texts.sort((a, b) => b.node.getStart() - a.node.getStart())) r.node.replaceWithText(r.text);
  removeUnusedLocals(body, used);
  removeUnusedImports(sf, used);
  out.edits.push(...done.filter((p) => p.summary !== '').map((p) => ({ action: target.action, file: target.file, summary: p.summary })));
  return out;
}

/**
 * The clock reads a parameter's value is made of, each with what reads the key's start time instead: `Date.now()` →
 * `ctx.startedAt`, `new Date()` → `new Date(ctx.startedAt)`, `dayjs()` → `dayjs(ctx.startedAt)` (moment alike), also inside a local declared in the handler that the
 * value alone uses (`const now = Math.floor(Date.now() / 1000)`). Undefined when any per-attempt part is something
 * else (a random value, performance.now(), a local used elsewhere too, one declared outside the handler): the
 * parameter is then left to the user whole.
 */
function clockReads(value: ts.Node, body: Node, inside: (node: ts.Node) => boolean, wrap: (node: ts.Node) => Node | undefined, depth = 0): Array<{ node: Node; text: (context: string) => string }> | undefined {
  const parts = volatileParts(value);
  if (parts.length === 0 || depth > 2) return undefined;
  const out: Array<{ node: Node; text: (context: string) => string }> = [];
  for (const part of parts) {
    const node = inside(part) ? wrap(part) : undefined;
    if (node && ts.isCallExpression(part) && part.arguments.length === 0 && part.expression.getText().replace(/\s+/g, '') === 'Date.now') {
      out.push({ node, text: (ctx) => `${ctx}.startedAt` });
    } else if (node && ts.isNewExpression(part)) {
      out.push({ node, text: (ctx) => `new Date(${ctx}.startedAt)` });
    } else if (node && ts.isCallExpression(part) && part.arguments.length === 0 && CLOCK_LIBRARY_CALL.test(part.expression.getText())) {
      // dayjs() / moment(): the same library, started at the key's start time.
      const library = part.expression.getText();
      out.push({ node, text: (ctx) => `${library}(${ctx}.startedAt)` });
    } else if (ts.isIdentifier(part) && references(body, part.text) === 1) {
      const init = localInitializer(part);
      const reads = init && inside(init) && ts.isVariableDeclaration(init.parent) ? clockReads(unwrap(init), body, inside, wrap, depth + 1) : undefined;
      if (!reads) return undefined;
      out.push(...reads);
    } else return undefined;
  }
  return out;
}

/** A provider's length limit on a merchant reference: a derived key (64 hex characters) must fit with the text around it. */
const REFERENCE_LIMIT: Partial<Record<PaymentProvider, number>> = { adyen: 80 };
const PROVIDER_KEY_LENGTH = 64;

/**
 * Whether `value` with each of its `parts` per-attempt parts replaced by a derived key stays within `limit`: provable
 * only when the value is that part alone or a template whose every hole is one of them.
 */
function fitsLimit(value: ts.Node, parts: number, limit: number): boolean {
  const node = ts.isParenthesizedExpression(value) ? value.expression : value;
  if (parts === 1 && volatileParts(node).length === 1 && !ts.isTemplateExpression(node) && !ts.isBinaryExpression(node)) return PROVIDER_KEY_LENGTH <= limit;
  if (!ts.isTemplateExpression(node) || node.templateSpans.length !== parts) return false;
  const fixed = node.head.text.length + node.templateSpans.reduce((sum, span) => sum + span.literal.text.length, 0);
  return fixed + parts * PROVIDER_KEY_LENGTH <= limit;
}

const lineOf = (sf: SourceFile, node: ts.Node) => sf.compilerNode.getLineAndCharacterOfPosition(node.getStart(sf.compilerNode)).line + 1;

/**
 * Where the derived key goes instead of a per-attempt one: Stripe options holding only the key become
 * `stripeRequestOptions(ctx)`; otherwise the key's value (a shorthand `{ idempotencyKey }` spelled out).
 */
function keyReplacement(key: ts.Expression, provider: PaymentProvider, wrap: (node: ts.Node) => Node | undefined): { node: Node; build: (helperCall: string) => string } | undefined {
  const derived = DERIVED_KEY[provider]!;
  const property = key.parent;
  const literal = property?.parent;
  if (derived.options === true && literal && ts.isObjectLiteralExpression(literal) && literal.properties.length === 1 && ts.isCallExpression(literal.parent) && literal.parent.arguments.includes(literal)) {
    const node = wrap(literal);
    return node && { node, build: (helperCall) => helperCall };
  }
  if (property && ts.isShorthandPropertyAssignment(property)) {
    const node = wrap(property);
    return node && { node, build: (helperCall) => `${property.name.text}: ${derived.value(helperCall)}` };
  }
  const node = property && ts.isPropertyAssignment(property) && property.initializer === key ? wrap(key) : undefined;
  return node && { node, build: (helperCall) => derived.value(helperCall) };
}

/**
 * The per-attempt parts of a label's value, each widened to the call chain that formats it
 * (`new Date().toISOString()`, `Math.random().toString(36).slice(2)`), where a string may stand: the whole value, a
 * template's hole, a property's value (metadata), String(…)'s argument, a side of `+`. Undefined when any part sits
 * elsewhere (arithmetic), or is a local the handler uses again: apply leaves that label to the user rather than change
 * its type or cut its link to the other use.
 */
function labelParts(value: ts.Node, wrap: (node: ts.Node) => Node | undefined, uses: (name: string) => number): Array<{ node: Node; shorthand?: string }> | undefined {
  const out: Array<{ node: Node; shorthand?: string }> = [];
  for (const part of volatileParts(value)) {
    // A local the handler also uses elsewhere (an id stored in the database too) ties the label to it: not ours to cut.
    if (ts.isIdentifier(part) && uses(part.text) > 1) return undefined;
    let node: ts.Node = part;
    while (ts.isPropertyAccessExpression(node.parent) && node.parent.expression === node && ts.isCallExpression(node.parent.parent) && node.parent.parent.expression === node.parent) node = node.parent.parent;
    const parent = node.parent;
    if (ts.isShorthandPropertyAssignment(parent)) {
      const wrapped = wrap(parent);
      if (!wrapped) return undefined;
      out.push({ node: wrapped, shorthand: parent.name.text });
      continue;
    }
    const stringPlace =
      node === value ||
      ts.isTemplateSpan(parent) ||
      (ts.isPropertyAssignment(parent) && parent.initializer === node) ||
      (ts.isCallExpression(parent) && parent.expression.getText() === 'String') ||
      (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.PlusToken && [parent.left, parent.right].some((side) => ts.isStringLiteralLike(side) || ts.isTemplateExpression(side)));
    const wrapped = stringPlace ? wrap(node) : undefined;
    if (!wrapped) return undefined;
    out.push({ node: wrapped });
  }
  return out.length > 0 ? out : undefined;
}

/** Identifiers in `scope` named `name`, other than declarations' names and property names. */
function references(scope: Node, name: string): number {
  return scope.getDescendantsOfKind(SyntaxKind.Identifier).filter((id) => {
    if (id.getText() !== name) return false;
    const parent = id.getParent();
    if (Node.isPropertyAccessExpression(parent) && parent.getNameNode() === id) return false;
    if (Node.isPropertyAssignment(parent) && parent.getNameNode() === id) return false;
    if (Node.isVariableDeclaration(parent) && parent.getNameNode() === id) return false;
    return !Node.isImportSpecifier(parent) && !Node.isImportClause(parent);
  }).length;
}

/** `const id = randomUUID();` whose only use was replaced: removed, so the edit leaves no dead per-attempt value. */
function removeUnusedLocals(body: Node, used: Set<string>): void {
  for (const statement of body.getDescendantsOfKind(SyntaxKind.VariableStatement)) {
    const declarations = statement.getDeclarations();
    const only = declarations.length === 1 ? declarations[0] : undefined;
    const initializer = only?.getInitializer();
    if (!only || !initializer || !Node.isIdentifier(only.getNameNode()) || !used.has(only.getName())) continue;
    if (volatileParts(initializer.compilerNode).length === 0 || references(body, only.getName()) > 0) continue;
    for (const id of initializer.getDescendantsOfKind(SyntaxKind.Identifier)) used.add(id.getText());
    statement.remove();
  }
}

/** `import { randomUUID } from 'node:crypto'` left unused: the specifier goes, the declaration only when it was its last. */
export function removeUnusedImports(sf: SourceFile, used: ReadonlySet<string>): void {
  for (const declaration of sf.getImportDeclarations()) {
    if (!VOLATILE_MODULES.has(declaration.getModuleSpecifierValue())) continue;
    for (const specifier of declaration.getNamedImports()) {
      const local = specifier.getAliasNode()?.getText() ?? specifier.getName();
      if (!used.has(local) || references(sf, local) > 0) continue;
      if (declaration.getNamedImports().length === 1 && !declaration.getDefaultImport() && !declaration.getNamespaceImport()) {
        declaration.remove();
        break;
      }
      specifier.remove();
    }
  }
}
