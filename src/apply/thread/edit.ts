import { Node, type CallExpression, type SourceFile, type ts } from 'ts-morph';
import { KEY_HEADERS } from '../../findings/providerCalls.js';
import type { Handler } from '../followHandler.js';
import { importStyleFor, type ProjectImports } from '../importStyle.js';
import { bindsName, ensureNamedImport, fitStatement, morphNode, parseSource, spreadFirst } from '../sourceFile.js';
import type { TransformContext } from '../transforms/context.js';
import { httpKeyPlacement } from '../transforms/httpKey.js';
import { DERIVED_KEY } from '../transforms/stableParams.js';
import { CONTEXT_NAME, ensureHandlerContext } from '../transforms/stripeKey.js';
import { nestMutationDecorator } from '../transforms/nestjsRoute.js';
import { AMBIENT_ACCESSOR, keyHelper, type OpenCall } from './chains.js';
import { isFunctionNode } from './locate.js';

/** One planned edit, on the findings' compiler nodes; made on a fresh ts-morph parse of the file. */
export type Op =
  | { kind: 'param'; fn: ts.FunctionLikeDeclaration }
  /** The function reads the claim it runs under (LocatedHandler.ambient): `const idempotencyContext = idempotencyOf();`. */
  | { kind: 'read'; fn: ts.FunctionLikeDeclaration }
  | { kind: 'arg'; call: ts.CallExpression; index: number; value: string }
  | { kind: 'key'; item: OpenCall; step: number | undefined };

/** A handler that reads the claim: `const idempotencyContext = <accessor>` and its guard go in first. */
export interface HandlerEdit {
  fn: ts.FunctionLikeDeclaration;
  accessor: string;
  addRequest: boolean;
}

const isScript = (file: string) => /\.(m|c)?jsx?$/.test(file);

/** The file's text with the planned edits made, later positions first so no edit moves a node another still needs. */
export function editFile(file: string, text: string, ops: readonly Op[], handlers: readonly HandlerEdit[], input: { scaffoldDir: string; imports: ProjectImports; scaffoldModules: ReadonlySet<string> }): string {
  const style = importStyleFor(file, text, input.scaffoldDir, input.imports);
  const sf = parseSource(file, text, style);
  const context: TransformContext = { style, anyLine: true, scaffoldModules: input.scaffoldModules };
  const planned = ops.map((op) => ({ op, node: op.kind === 'param' || op.kind === 'read' ? morphNode(sf, op.fn, isFunctionNode) : morphNode(sf, op.kind === 'arg' ? op.call : op.item.call, Node.isCallExpression) }));
  // A per-call key's part may sit before its call (the local it names): wrapped now, before any edit moves it.
  const parts = new Map(ops.flatMap((op) => (op.kind === 'key' && op.item.perCall ? [[op, morphNode(sf, op.item.perCall.part)] as const] : [])));
  const handlerNodes = handlers.map((h) => ({ ...h, node: morphNode(sf, h.fn, isFunctionNode) }));
  for (const { op, node } of planned.sort((a, b) => (b.node?.getStart() ?? 0) - (a.node?.getStart() ?? 0))) {
    if (!node) continue;
    if (op.kind === 'param') addContextParameter(sf, node as Handler, file, context);
    else if (op.kind === 'read') readAmbientContext(sf, node as Handler, context);
    else if (op.kind === 'arg') passContext(node as CallExpression, op.index, op.value);
    else keyCall(sf, node as CallExpression, op.item, op.step, context, parts.get(op));
  }
  for (const h of handlerNodes) {
    if (!h.node) continue;
    if (h.addRequest && Node.isMethodDeclaration(h.node) && !h.node.getParameters().some((p) => p.getName() === 'request')) {
      // A GraphQL resolver has no @Req(): its request is the GraphQL context's `req`.
      const resolver = nestMutationDecorator(h.node) !== undefined;
      const quote = context.style.quote === 'double' ? '"' : "'";
      const decorator = resolver ? { module: '@nestjs/graphql', name: 'Context', arguments: [`${quote}req${quote}`] } : { module: '@nestjs/common', name: 'Req', arguments: [] };
      if (!ensureNamedImport(sf, decorator.module, decorator.name)) continue;
      h.node.addParameter({ name: 'request', decorators: [{ name: decorator.name, arguments: decorator.arguments }], ...(isScript(file) ? {} : { type: 'object' }) });
    }
  }
  // Raw text last: it forgets the file's wrapped nodes, so each handler is found again by its place among the
  // file's functions (the statements inserted add none), the last first.
  const functions = () => sf.getDescendants().filter(isFunctionNode);
  const places = handlerNodes.flatMap((h) => (h.node ? [{ ...h, index: functions().indexOf(h.node) }] : [])).filter((h) => h.index >= 0);
  if (places.length > 0 && ensureNamedImport(sf, context.style.specifier('index'), 'idempotencyOf')) {
    for (const h of places.sort((a, b) => b.index - a.index)) ensureHandlerContext(sf, functions()[h.index]!, h.accessor, context);
  }
  return sf.getFullText();
}

/** `idempotencyContext?: ProviderKeySource` last (no type in JavaScript), the type imported from providers.ts. */
function addContextParameter(sf: SourceFile, fn: Handler, file: string, context: TransformContext): void {
  if (fn.getParameters().some((p) => p.getName() === CONTEXT_NAME)) return;
  if (isScript(file)) {
    fn.addParameter({ name: CONTEXT_NAME });
    return;
  }
  const specifier = context.style.specifier('providers');
  const imported = sf.getImportDeclarations().some((d) => d.getModuleSpecifierValue() === specifier && d.getNamedImports().some((n) => n.getName() === 'ProviderKeySource'));
  if (!imported && !bindsName(sf, 'ProviderKeySource')) {
    const last = sf.getImportDeclarations().at(-1);
    const added = sf.insertImportDeclaration(last ? last.getChildIndex() + 1 : 0, { isTypeOnly: true, moduleSpecifier: specifier, namedImports: ['ProviderKeySource'] });
    // As ensureNamedImport does: no semicolon in a file written without them.
    const fitted = fitStatement(sf, added.getText());
    if (fitted !== added.getText()) added.replaceWithText(fitted);
  }
  fn.addParameter({ name: CONTEXT_NAME, hasQuestionToken: true, type: 'ProviderKeySource' });
}

/**
 * `const idempotencyContext = idempotencyOf();` first in the function's body: the claim of the protected route it runs
 * for, undefined anywhere else (no guard: outside a route the calls keyed from it send what they sent before).
 */
function readAmbientContext(sf: SourceFile, fn: Handler, context: TransformContext): void {
  const body = fn.getBody();
  if (!body || !Node.isBlock(body) || body.getVariableStatement(CONTEXT_NAME)) return;
  if (!ensureNamedImport(sf, context.style.specifier('index'), 'idempotencyOf')) return;
  body.insertStatements(0, fitStatement(sf, `const ${CONTEXT_NAME} = ${AMBIENT_ACCESSOR};`));
}

/** The context as the call's argument at `index` (absent optional arguments before it passed as undefined). */
function passContext(call: CallExpression, index: number, value: string): void {
  const args = call.getArguments();
  if (args[index]?.getText() === value) return;
  call.addArguments([...Array.from({ length: Math.max(0, index - args.length) }, () => 'undefined'), value]);
}

/**
 * The call gets the provider's key from the context when there is one, and sends what it sent before otherwise:
 * Stripe's request options, the SDK keying's place (adyenKey.ts, paypalKey.ts) or the raw-HTTP header (httpKey.ts),
 * each guarded by the optional parameter.
 */
function keyCall(sf: SourceFile, call: CallExpression, item: OpenCall, step: number | undefined, context: TransformContext, perCallPart: Node | undefined): void {
  const helper = keyHelper(item);
  if (item.perCall && !perCallPart) return;
  if (!ensureNamedImport(sf, context.style.specifier('providers'), helper)) return;
  const key = `${helper}(${CONTEXT_NAME}${step !== undefined ? `, ${step}` : ''})`;
  if (perCallPart) {
    guardPerCallKey(perCallPart, item.how.via === 'http' ? key : derivedKeyValue(item.provider, key));
    return;
  }
  if (item.how.via === 'sdk') {
    item.how.keying.placement(call)?.(key, CONTEXT_NAME);
    return;
  }
  if (item.how.via === 'http') {
    const place = httpKeyPlacement(call, sf);
    const q = context.style.quote === 'double' ? '"' : "'";
    if (typeof place !== 'string') place(`${q}${KEY_HEADERS[item.provider]!}${q}`, key, CONTEXT_NAME);
    return;
  }
  const options = call.getArguments()[item.how.paramsIndex + 1];
  if (options && Node.isObjectLiteralExpression(options)) spreadFirst(options, `(${CONTEXT_NAME} ? ${key} : {})`);
  else if (!options) call.addArgument(`${CONTEXT_NAME} ? ${key} : undefined`);
}

/** The key value a provider's SDK takes from the helper's result (stableParams DERIVED_KEY): `stripeRequestOptions(…).idempotencyKey`. */
function derivedKeyValue(provider: OpenCall['provider'], helperCall: string): string {
  return DERIVED_KEY[provider]?.value(helperCall) ?? helperCall;
}

/**
 * `randomUUID()` → `idempotencyContext ? <derived> : randomUUID()`: the derived key when given a context, exactly the
 * old value otherwise. Parenthesised unless it is a whole initializer (`options?.idempotencyKey || (…)`).
 */
function guardPerCallKey(part: Node, derived: string): void {
  const parent = part.getParent();
  const whole = parent !== undefined && (Node.isPropertyAssignment(parent) || Node.isVariableDeclaration(parent)) && parent.getInitializer() === part;
  const guarded = `${CONTEXT_NAME} ? ${derived} : ${part.getText()}`;
  part.replaceWithText(whole ? guarded : `(${guarded})`);
}
