import { Node, SyntaxKind, type ArrowFunction, type FunctionDeclaration, type FunctionExpression, type MethodDeclaration, type SourceFile } from 'ts-morph';
import type { StoreConnection } from '../../inspect/types.js';
import { instanceImport, instancePool, instanceStore } from '../renderInstance.js';
import { ensureNamedImport, fitStatement } from '../sourceFile.js';
import type { WiringTarget } from '../types.js';
import { clientKeyStep, manualOnly, type Transform, type TransformContext, type TransformOutcome } from './context.js';
import { keyHandlerCalls } from './stripeKey.js';
import { webhookManual } from './webhookManual.js';
import { graphqlCall } from './graphqlResolver.js';

export type PlainFunction = FunctionDeclaration | FunctionExpression | ArrowFunction | MethodDeclaration;

const isFunction = (node: Node): node is PlainFunction => Node.isFunctionDeclaration(node) || Node.isFunctionExpression(node) || Node.isArrowFunction(node) || Node.isMethodDeclaration(node);

/** Return types whose values a JSON round trip changes (a repeat would see a string, an object, or nothing). */
export const NOT_JSON = /\b(Date|Map|Set|WeakMap|bigint|BigInt|Buffer|Uint8Array|ArrayBuffer|Error|Function|symbol)\b|=>/;

/** The function's name as declared: `function f`, `const f = async () =>`, `f: async () =>`, `async f()`. */
function nameOf(fn: PlainFunction): string | undefined {
  if (Node.isFunctionDeclaration(fn) || Node.isMethodDeclaration(fn)) return fn.getName();
  const parent = fn.getParent();
  return parent && (Node.isVariableDeclaration(parent) || Node.isPropertyAssignment(parent)) ? parent.getName() : undefined;
}

/** The line a reader sees the function start on: its declaration (`export const f = async …`) for an assigned one. */
function declaredLine(fn: PlainFunction): number {
  const parent = fn.getParent();
  if (parent && Node.isVariableDeclaration(parent)) return parent.getVariableStatement()?.getStartLineNumber() ?? parent.getStartLineNumber();
  if (parent && Node.isPropertyAssignment(parent)) return parent.getStartLineNumber();
  // A decorated method (TypeGraphQL's `@Mutation()`) starts, as inspection records it, at its first decorator.
  if (Node.isMethodDeclaration(fn)) return fn.getDecorators()[0]?.getStartLineNumber() ?? fn.getStartLineNumber();
  return fn.getStartLineNumber();
}

/** Whether the file already calls `idempotency.<codeName>(…)`: the function is wrapped. */
const isWrapped = (sf: SourceFile, codeName: string) =>
  sf.getDescendantsOfKind(SyntaxKind.CallExpression).some((call) => call.getExpression().getText() === `idempotency.${codeName}`);

/** The function the action's `source` names: one starting on the recorded line, or (a file apply wrote) by name. */
function locate(sf: SourceFile, target: WiringTarget, anyLine: boolean): PlainFunction | undefined {
  const all = sf.getDescendants().filter(isFunction);
  // Not a decorator's own arrow (`@Mutation(() => Order)` on the recorded line).
  const here = all.filter((fn) => (declaredLine(fn) === target.line || fn.getStartLineNumber() === target.line) && !fn.getFirstAncestorByKind(SyntaxKind.Decorator));
  if (here.length === 1) return here[0];
  if (anyLine) {
    const named = all.filter((fn) => nameOf(fn) === target.codeName || nameOf(fn) === target.action);
    if (named.length === 1) return named[0];
  }
  return undefined;
}

/**
 * The call's input: the only parameter (`issueRefund(request)`), tRPC's destructured `{ input }`, or a GraphQL
 * resolver's `args` (the second of `(parent, args, context)`). Undefined when the code does not say.
 */
function inputOf(fn: PlainFunction): string | undefined {
  const params = fn.getParameters();
  const [first, second] = params;
  const name = (p: typeof first) => (p && Node.isIdentifier(p.getNameNode()) && !p.isRestParameter() ? p.getName() : undefined);
  if (params.length === 1 && name(first)) return name(first);
  const pattern = first?.getNameNode();
  if (params.length === 1 && pattern && Node.isObjectBindingPattern(pattern)) {
    const input = pattern.getElements().find((e) => (e.getPropertyNameNode()?.getText() ?? e.getName()) === 'input' && !e.getPropertyNameNode());
    return input ? 'input' : undefined;
  }
  if (params.length >= 2 && name(second)) return name(second);
  return undefined;
}

/** What the function returns, as the wrapper would store it: each `return` of its own (not of nested functions). */
export function returnedExpressions(fn: PlainFunction): Array<Node | undefined> {
  const body = fn.getBody();
  if (body && !Node.isBlock(body)) return [body];
  return fn.getDescendantsOfKind(SyntaxKind.ReturnStatement).filter((r) => r.getFirstAncestor(isFunction) === fn).map((r) => r.getExpression());
}

/** A value that is visibly JSON already: nothing, a literal, or an object/array literal without `new`, functions or spreads of unknowns. */
export function visiblyJson(node: Node | undefined): boolean {
  if (!node) return true;
  const inner = Node.isParenthesizedExpression(node) ? node.getExpression() : node;
  if (Node.isObjectLiteralExpression(inner) || Node.isArrayLiteralExpression(inner)) {
    return !inner.getDescendants().some((d) => Node.isNewExpression(d) || isFunction(d) || Node.isSpreadElement(d) || Node.isSpreadAssignment(d) || Node.isMethodDeclaration(d) || Node.isGetAccessorDeclaration(d));
  }
  return Node.isStringLiteral(inner) || Node.isNumericLiteral(inner) || Node.isNoSubstitutionTemplateLiteral(inner) || Node.isTemplateExpression(inner) || inner.getKind() === SyntaxKind.TrueKeyword || inner.getKind() === SyntaxKind.FalseKeyword || inner.getKind() === SyntaxKind.NullKeyword;
}

/** Why wrapping this function would change what it does, or undefined when it is mechanically safe. */
function unsafe(fn: PlainFunction, target: WiringTarget, snippet: string, keyed = false): string | undefined {
  // tRPC and GraphQL await what a resolver returns, so a plain one may return the wrapper's Promise as it is.
  const awaited = target.transport === 'trpc' || target.transport === 'graphql';
  if (!fn.isAsync() && !awaited) return `it is not async (the wrapper returns a Promise): make it async, then ${snippet}`;
  if ((Node.isFunctionDeclaration(fn) || Node.isFunctionExpression(fn) || Node.isMethodDeclaration(fn)) && fn.isGenerator()) return `it is a generator; wrap the work it does by hand: ${snippet}`;
  if (!fn.getBody()) return 'it has no body (an overload or a declaration); point actions[].source at the implementation';
  if (target.keySource !== 'derived' && !keyed) {
    // tRPC passes no request to a procedure: the key reaches it only through the context or the input.
    const where = target.transport === 'trpc' ? " (a tRPC procedure sees no request: put the request's Idempotency-Key header into the context your createContext returns, or add an idempotencyKey field to its input)" : '';
    return `its key comes from the caller, and apply cannot tell where the caller's key is${where}: ${snippet.replace('{ fingerprintInput', '{ key: <the caller\'s key>, fingerprintInput')}`;
  }
  if (target.scope !== undefined && target.scope !== 'global') return `its keys are scoped per ${target.scope}, and apply cannot tell how the caller is known here: ${snippet.replace(/\(\{ (key|fingerprintInput)/, `({ scope: <the ${target.scope} id>, $1`)}`;
  const declared = fn.getReturnTypeNode()?.getText();
  // A GraphQL result reaches its client as JSON anyway (the schema serialises it), so only a declared type that is
  // visibly not JSON (a Date, a Map) keeps a resolver out.
  const json = target.transport === 'graphql' || returnedExpressions(fn).every(visiblyJson);
  if ((declared !== undefined && NOT_JSON.test(declared)) || !json) {
    return `a repeat gets the stored JSON of its result, and the result is not visibly JSON (a Date, a class, a value apply cannot see): if it is, ${snippet}`;
  }
  return undefined;
}

/**
 * Lines of the block's text with one more indentation unit, except those inside a multi-line template literal
 * (re-indenting them would change the string).
 */
function indented(fn: PlainFunction, text: string, firstLine: number, unit: string): string {
  const frozen = fn
    .getDescendants()
    .filter((d) => (Node.isNoSubstitutionTemplateLiteral(d) || Node.isTemplateExpression(d)) && d.getStartLineNumber() !== d.getEndLineNumber())
    .map((d) => [d.getStartLineNumber() + 1, d.getEndLineNumber()] as const);
  return text
    .split('\n')
    .map((line, i) => (line.trim() === '' || frozen.some(([from, to]) => firstLine + i >= from && firstLine + i <= to) ? line : unit + line))
    .join('\n');
}

/**
 * `{ return <opening> { …body }); }`: the function's body runs inside the callback `opening` starts
 * (`idempotency.issueRefund({ … }, async () =>`), re-indented one unit; an expression body becomes
 * `<opening> <expression>)`. False when the function has no body.
 */
export function wrapBody(sf: SourceFile, fn: PlainFunction, opening: string): boolean {
  const body = fn.getBody();
  if (!body) return false;
  if (Node.isBlock(body)) {
    const unit = sf.getProject().manipulationSettings.getIndentationText();
    const open = body.getStart() + 1;
    const close = body.getEnd() - 1;
    const inner = sf.getFullText().slice(open, close).replace(/^[^\S\n]*\n/, '').replace(/\n[^\S\n]*$/, '');
    const indent = body.getIndentationText() + unit;
    const firstLine = sf.getLineAndColumnAtPos(open).line + 1;
    const text = `{\n${indent}${fitStatement(sf, `return ${opening} {`).replace(/;$/, '')}\n${indented(fn, inner, firstLine, unit)}\n${indent}${fitStatement(sf, '});')}\n${body.getIndentationText()}}`;
    // replaceText, not replaceWithText: that re-indents every later line by the body's own indentation again.
    sf.replaceText([body.getStart(), body.getEnd()], text);
  } else {
    body.replaceWithText(`${opening} ${body.getText()})`);
  }
  return true;
}

/**
 * No web framework (tRPC procedures, GraphQL resolvers, scripts, jobs): the function the action names runs inside
 * the scaffold's per-action wrapper, `return idempotency.issueRefund({ fingerprintInput: request }, async () => { …body })`.
 * Only where that changes nothing but the idempotency: an async function, a key derived from its input, global keys,
 * and a result that is visibly JSON (a repeat gets the stored JSON). Anything else is a manual step with the snippet.
 */
export const wrapPlainFunction: Transform = (sf, target, context) => {
  if (isWrapped(sf, target.codeName)) return keyWork(sf, target, context, { edits: [], manual: [] });
  const fn = locate(sf, target, context.anyLine);
  if (!fn) return { edits: [], manual: [], stale: `${target.file} changed since inspection: no function of ${target.action} starts at line ${target.line}` };
  const line = declaredLine(fn);
  // A webhook is keyed by the provider's event id after its signature check, not by the function's input.
  if (target.trigger === 'webhook') return webhookManual(target, line);
  const name = nameOf(fn);
  // A GraphQL resolver: the key from the request in its context, the input its arguments (graphqlResolver.ts).
  const graphql = target.transport === 'graphql' ? graphqlCall(fn, target, context) : undefined;
  if (graphql && 'manual' in graphql) return manualOnly(target, graphql.manual, line);
  const input = graphql?.input ?? inputOf(fn);
  const key = graphql ? `key: ${graphql.key}, ` : '';
  const call = `idempotency.${target.codeName}({ ${key}fingerprintInput: ${input ?? '<its input>'} }, async () => …)`;
  const snippet = `wrap its body as \`return ${call}\` (the wrapper from ${context.style.specifier('instance')})`;
  const reason = unsafe(fn, target, snippet, graphql !== undefined) ?? (input === undefined ? `apply cannot tell which parameter is its input (one parameter, tRPC's { input }, or a resolver's args): ${snippet}` : undefined);
  if (reason) return manualOnly(target, reason, line);
  const position = sf.getDescendants().filter(isFunction).indexOf(fn);
  if (!ensureNamedImport(sf, context.style.specifier('instance'), 'idempotency')) {
    return manualOnly(target, `the file already has its own binding named "idempotency": ${snippet}`, line);
  }
  // An import edit that rewrote text forgets nodes: then the same function again, by its place among the file's functions.
  const again = fn.wasForgotten() ? sf.getDescendants().filter(isFunction)[position]! : fn;
  // The context parameter the key is read from, added where the resolver did not take one.
  if (graphql?.addParameter) again.addParameter(graphql.addParameter);
  const wrapped = `idempotency.${target.codeName}({ ${key}fingerprintInput: ${input} }, async () =>`;
  if (!wrapBody(sf, again, wrapped)) return manualOnly(target, 'it has no body', line);
  const keyedBy = graphql ? `keyed by the ${graphql.header} header of the request in its GraphQL context, its arguments fingerprinted` : 'keyed by its input';
  const out: TransformOutcome = { edits: [{ action: target.action, file: target.file, summary: `runs ${name ?? 'the function'} inside idempotency.${target.codeName}(…), ${keyedBy}` }], manual: graphql ? [...clientKeyStep(target), ...graphql.steps] : [] };
  return keyWork(sf, target, context, out);
};

/**
 * The provider calls inside the wrapper's `work` are keyed from its claim (stripeKey.ts, keyHandlerCalls): the work
 * runs inside the claim's async context, so `idempotencyOf()` is the context the wrapper passes it.
 */
function keyWork(sf: SourceFile, target: WiringTarget, context: TransformContext, out: TransformOutcome): TransformOutcome {
  const work = sf
    .getDescendantsOfKind(SyntaxKind.CallExpression)
    .filter((call) => call.getExpression().getText() === `idempotency.${target.codeName}`)
    .map((call) => call.getArguments()[1])
    .find((arg): arg is ArrowFunction | FunctionExpression => !!arg && (Node.isArrowFunction(arg) || Node.isFunctionExpression(arg)));
  if (!work) return out;
  const keyed = keyHandlerCalls(sf, work, target, context, 'idempotencyOf()');
  return { ...out, edits: [...out.edits, ...keyed.edits], manual: [...out.manual, ...keyed.manual] };
}

/**
 * `<scaffold>/instance.ts` without a web framework: the app's one createIdempotency(), written once and then the
 * user's. Calls pass their own `scope`; the resolver is only the fallback (apply wraps global actions only).
 */
export function renderPlainInstance(storeId?: string, memory = true, connection?: StoreConnection): string {
  return `${instanceImport(memory)}

// Written once by \`idempotency-builder apply\`; yours to edit. Functions that apply wrapped import \`idempotency\` from here.
${instancePool(storeId, memory, connection)}

export const idempotency = createIdempotency({
  pool,
${instanceStore(memory)}  // The caller's id for scoped actions whose calls pass no \`scope\` (e.g. from your request-scoped storage); undefined throws PrincipalMissingError.
  principal: () => undefined,
});
`;
}
