import { Node, SyntaxKind, type ArrowFunction, type CallExpression, type Expression, type FunctionDeclaration, type FunctionExpression, type SourceFile, type VariableDeclaration } from 'ts-morph';
import { USE_SERVER_FILE } from '../../inspect/detectors/rpcEndpoints.js';
import { STREAMED_RESPONSE } from '../../inspect/detectors/streamedResponse.js';
import { bindsName, ensureNamedImport, fitStatement } from '../sourceFile.js';
import type { ImportStyle, WiringTarget } from '../types.js';
import { manualOnly, type Transform, type TransformOutcome } from './context.js';
import { keyHandlerCalls } from './stripeKey.js';
import { isPagesApiFile } from '../../model/labels.js';

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** The three Next.js shapes apply wraps, by where the file sits and what it says. */
export type NextKind = 'route' | 'pages' | 'action';

export function nextKindOf(file: string, text: string): NextKind | undefined {
  if (USE_SERVER_FILE.test(text)) return 'action';
  if (/(^|\/)route\.[cm]?[jt]sx?$/.test(file)) return 'route';
  if (isPagesApiFile(file)) return 'pages';
  return undefined;
}

/** The Server Action's exported name: init records it as the route `/<name>`. */
export const serverActionName = (target: WiringTarget) => target.path?.split('/').filter(Boolean).pop();

/** A string literal in the file's quote style; the value is an identifier (checked by the callers), so nothing to escape. */
const literal = (style: ImportStyle, value: string) => (style.quote === 'double' ? `"${value}"` : `'${value}'`);

/** `idempotency.<wrapper>('<codeName>', …)`: the wiring apply writes, so a second run recognises it. */
function isWrap(node: Node | undefined, wrapper: string, codeName: string): node is CallExpression {
  if (!node || !Node.isCallExpression(node) || node.getExpression().getText() !== `idempotency.${wrapper}`) return false;
  const first = node.getArguments()[0];
  return !!first && (Node.isStringLiteral(first) || Node.isNoSubstitutionTemplateLiteral(first)) && first.getLiteralValue() === codeName;
}

/** The text of the exported function or const `name` ('' when the file has neither). */
function exportedText(sf: SourceFile, name: string): string {
  return (sf.getFunction(name) ?? sf.getVariableDeclaration(name))?.getText() ?? '';
}

/** Whether `name` is used in the file anywhere but its own declaration (a re-export, a call from a sibling). */
function referencedElsewhere(sf: SourceFile, name: string, declaration: Node): boolean {
  return sf.getDescendantsOfKind(SyntaxKind.Identifier).some((id) => id.getText() === name && id !== declaration && !Node.isPropertyAccessExpression(id.getParent()));
}

const exportedVariable = (sf: SourceFile, name: string): VariableDeclaration | undefined => {
  const declaration = sf.getVariableDeclaration(name);
  return declaration?.getVariableStatement()?.isExported() ? declaration : undefined;
};

/**
 * `export async function POST(request) {…}` becomes `async function <name>(request) {…}` followed by
 * `export const POST = idempotency.<wrapper>('<codeName>', <name>)`: the body stays as it was, so the diff is two
 * lines; a const export gets its initializer wrapped in place.
 */
function wrapExport(sf: SourceFile, target: WiringTarget, style: ImportStyle, exported: string, wrapper: string, inner: string, addKey: boolean): TransformOutcome | 'wired' {
  const fn = sf.getFunction(exported);
  const variable = exportedVariable(sf, exported);
  if (variable && isWrap(variable.getInitializer(), wrapper, target.codeName)) return 'wired';
  const wrap = (expression: string) => `idempotency.${wrapper}(${literal(style, target.codeName)}, ${expression})`;
  if (fn?.isExported() && !fn.isDefaultExport()) {
    if (fn.hasDeclareKeyword() || !fn.getBody()) return manualOnly(target, `${exported} is declared without a body (an overload?); wrap it with idempotency.${wrapper} by hand`, fn.getStartLineNumber());
    if (referencedElsewhere(sf, exported, fn.getNameNode()!)) return manualOnly(target, `${exported} is also used elsewhere in the file; export it as idempotency.${wrapper}(${literal(style, target.codeName)}, …) by hand`, fn.getStartLineNumber());
    if (bindsName(sf, inner)) return manualOnly(target, `the file already declares ${inner}; wrap ${exported} with idempotency.${wrapper} by hand`, fn.getStartLineNumber());
    if (!ensureNamedImport(sf, style.specifier('instance'), 'idempotency')) return manualOnly(target, 'the file already has its own binding named "idempotency"; wrap the export by hand', fn.getStartLineNumber());
    if (addKey) addKeyParameter(fn, sf);
    // Found again: a raw text edit above forgets the wrapped nodes.
    const declared = sf.getFunctionOrThrow(exported);
    declared.setIsExported(false);
    declared.getNameNode()!.replaceWithText(inner);
    sf.insertStatements(declared.getChildIndex() + 1, fitStatement(sf, `export const ${exported} = ${wrap(inner)};`));
    return { edits: [], manual: [] };
  }
  const initializer = variable?.getInitializer();
  if (variable && initializer) {
    if (addKey && !Node.isArrowFunction(initializer) && !Node.isFunctionExpression(initializer)) {
      if (!Node.isCallExpression(initializer)) return manualOnly(target, `${exported} is neither a function nor built by a call: it must take the idempotency key as its first argument before idempotency.${wrapper} can wrap it`, variable.getStartLineNumber());
      return wrapBuiltAction(sf, target, style, variable, exported, wrapper, inner, wrap);
    }
    if (!ensureNamedImport(sf, style.specifier('instance'), 'idempotency')) return manualOnly(target, 'the file already has its own binding named "idempotency"; wrap the export by hand', variable.getStartLineNumber());
    if (addKey) addKeyParameter(exportedVariable(sf, exported)!.getInitializerOrThrow(), sf);
    const again = exportedVariable(sf, exported)!.getInitializerOrThrow();
    replaceRaw(again, wrap(again.getText()));
    return { edits: [], manual: [] };
  }
  return { edits: [], manual: [], stale: `${target.file} changed since inspection: no exported ${exported} found (expected at line ${target.line})` };
}

/**
 * A Server Action built by a call (`export const signUp = validatedAction(schema, async (data, formData) => {…})`)
 * keeps its builder: the const is renamed and no longer exported, and the export takes the key first and hands the
 * rest on, `export const signUp = idempotency.idempotentAction('signUp', (_idempotencyKey: string, ...args:
 * Parameters<typeof signUpOnce>) => signUpOnce(...args))`. The diff is the renamed line and the new export.
 */
function wrapBuiltAction(sf: SourceFile, target: WiringTarget, style: ImportStyle, variable: VariableDeclaration, exported: string, wrapper: string, inner: string, wrap: (expression: string) => string): TransformOutcome {
  const line = variable.getStartLineNumber();
  const statement = variable.getVariableStatementOrThrow();
  if (statement.getDeclarations().length > 1) return manualOnly(target, `${exported} is declared together with other variables; give it a statement of its own, then run apply again`, line);
  if (referencedElsewhere(sf, exported, variable.getNameNode())) return manualOnly(target, `${exported} is also used elsewhere in the file; export it as idempotency.${wrapper}(${literal(style, target.codeName)}, …) by hand`, line);
  if (bindsName(sf, inner)) return manualOnly(target, `the file already declares ${inner}; wrap ${exported} with idempotency.${wrapper} by hand`, line);
  if (!ensureNamedImport(sf, style.specifier('instance'), 'idempotency')) return manualOnly(target, 'the file already has its own binding named "idempotency"; wrap the export by hand', line);
  const declared = exportedVariable(sf, exported)!;
  const typed = /\.[cm]?tsx?$/.test(sf.getFilePath());
  const forward = typed ? `(_idempotencyKey: string, ...args: Parameters<typeof ${inner}>) => ${inner}(...args)` : `(_idempotencyKey, ...args) => ${inner}(...args)`;
  const own = declared.getVariableStatementOrThrow();
  own.setIsExported(false);
  sf.getVariableDeclarationOrThrow(exported).getNameNode().replaceWithText(inner);
  const renamed = sf.getVariableDeclarationOrThrow(inner).getVariableStatementOrThrow();
  const oneLine = `export const ${exported} = ${wrap(forward)};`;
  // A long export gets one argument per line, as a formatter would write it.
  const indent = sf.getProject().manipulationSettings.getIndentationText();
  const exportStatement = oneLine.length <= 100 ? oneLine : `export const ${exported} = idempotency.${wrapper}(\n${indent}${literal(style, target.codeName)},\n${indent}${forward},\n);`;
  sf.insertStatements(renamed.getChildIndex() + 1, fitStatement(sf, exportStatement));
  return { edits: [], manual: [] };
}

/** The key comes first (`idempotentAction` calls fn(key, ...args)); unused by the body, hence the underscore. */
function addKeyParameter(fn: FunctionDeclaration | Expression, sf: SourceFile): void {
  if (!Node.isFunctionDeclaration(fn) && !Node.isArrowFunction(fn) && !Node.isFunctionExpression(fn)) return;
  const typed = /\.[cm]?tsx?$/.test(sf.getFilePath());
  if (Node.isArrowFunction(fn) && fn.getParameters().length === 0 && !fn.getFirstChildByKind(SyntaxKind.OpenParenToken)) {
    // `async x => …` has no parentheses to insert into.
    replaceRaw(fn, fn.getText().replace(/^(async\s+)?([A-Za-z_$][\w$]*)\s*=>/, (_m, a: string | undefined, p: string) => `${a ?? ''}(_idempotencyKey${typed ? ': string' : ''}, ${p}) =>`));
    return;
  }
  const first = fn.getParameters()[0];
  if (first && onOwnLine(first)) {
    sf.insertText(first.getStart(), `_idempotencyKey${typed ? ': string' : ''},\n${first.getIndentationText()}`);
    return;
  }
  fn.insertParameter(0, typed ? { name: '_idempotencyKey', type: 'string' } : { name: '_idempotencyKey' });
}

/** A list item (parameter, argument) that starts its own line: what goes before it gets a line of its own too. */
export function onOwnLine(node: Node): boolean {
  const text = node.getSourceFile().getFullText();
  const lineStart = text.lastIndexOf('\n', node.getStart() - 1) + 1;
  return text.slice(lineStart, node.getStart()).trim() === '';
}

/** Pages API: the default export goes through withPagesIdempotency, whatever form it has. */
function wrapDefaultExport(sf: SourceFile, target: WiringTarget, style: ImportStyle): TransformOutcome | 'wired' {
  const wrap = (expression: string) => `idempotency.withPagesIdempotency(${literal(style, target.codeName)}, ${expression})`;
  const assignment = sf.getExportAssignment((d) => !d.isExportEquals());
  if (assignment) {
    if (isWrap(assignment.getExpression(), 'withPagesIdempotency', target.codeName)) return 'wired';
    if (!ensureNamedImport(sf, style.specifier('instance'), 'idempotency')) return manualOnly(target, 'the file already has its own binding named "idempotency"; wrap the default export by hand', assignment.getStartLineNumber());
    const expression = sf.getExportAssignment((d) => !d.isExportEquals())!.getExpression();
    replaceRaw(expression, wrap(expression.getText()));
    return { edits: [], manual: [] };
  }
  const fn = sf.getFunctions().find((f) => f.isDefaultExport());
  if (!fn) return { edits: [], manual: [], stale: `${target.file} changed since inspection: no default export found (expected at line ${target.line})` };
  if (!ensureNamedImport(sf, style.specifier('instance'), 'idempotency')) return manualOnly(target, 'the file already has its own binding named "idempotency"; wrap the default export by hand', fn.getStartLineNumber());
  const declared = sf.getFunctions().find((f) => f.isDefaultExport())!;
  const name = declared.getName();
  if (name) {
    declared.setIsDefaultExport(false);
    sf.insertStatements(declared.getChildIndex() + 1, fitStatement(sf, `export default ${wrap(name)};`));
  } else {
    // `export default async function (req, res) {…}`: the same function, now as the wrapper's argument.
    replaceRaw(declared, fitStatement(sf, `export default ${wrap(declared.getText().replace(/^export\s+default\s+/, ''))};`));
  }
  return { edits: [], manual: [] };
}

/**
 * Next.js: App Router route handlers (`export async function POST`) and Pages API routes (`export default`) are
 * wrapped with the generated withIdempotency / withPagesIdempotency; Server Actions become idempotentAction(…)
 * and take the key as their first argument (their call sites are updated by the client pass, see clientWiring.ts).
 */
export const wireNextRoute: Transform = (sf, target, context) => {
  const kind = nextKindOf(target.file, sf.getFullText());
  if (!IDENTIFIER.test(target.codeName)) return manualOnly(target, `the action's code name ${JSON.stringify(target.codeName)} is not an identifier`);
  if (target.trigger === 'webhook') {
    // The provider signs the raw body and calls without a session: a request wrapper with a scoped key would refuse
    // every delivery. The event id is claimed inside the handler, after the signature check.
    return manualOnly(target, 'a webhook is deduplicated by its verified event id inside the handler (after constructEvent / signature check), not by the request wrapper: claim the event id with the generated webhook helpers');
  }
  const style = context.style;
  let outcome: TransformOutcome | 'wired';
  let summary: string;
  if (kind === 'route') {
    const method = (target.method ?? 'POST').toUpperCase();
    const streams = STREAMED_RESPONSE.exec(exportedText(sf, method))?.[0];
    if (streams) {
      const line = (sf.getFunction(method) ?? sf.getVariableDeclaration(method))?.getStartLineNumber() ?? target.line;
      return manualOnly(target, `${method} streams its answer (${streams.replace(/\s+/g, ' ')}…): withIdempotency stores a response whole before sending it, so the client would see nothing until the stream ends and a repeat would get the finished text at once. Claim the key around what must not run twice instead (idempotency.core.runOnce before the work starts), or leave the route to a guard of its own, such as a unique id the client sends`, line);
    }
    outcome = wrapExport(sf, target, style, method, 'withIdempotency', `${target.codeName}Handler`, false);
    summary = `wraps the ${method} route handler of ${target.path ?? ''} with idempotency.withIdempotency('${target.codeName}', …)`;
  } else if (kind === 'pages') {
    outcome = wrapDefaultExport(sf, target, style);
    summary = `wraps the Pages API route ${target.path ?? ''} with idempotency.withPagesIdempotency('${target.codeName}', …)`;
  } else if (kind === 'action') {
    const name = serverActionName(target);
    if (!name || !IDENTIFIER.test(name)) return manualOnly(target, `cannot tell the Server Action's exported name from ${target.path ?? 'its route'}`);
    outcome = wrapExport(sf, target, style, name, 'idempotentAction', `${name}Once`, true);
    summary = `makes the Server Action ${name} idempotentAction('${target.codeName}', …): it now takes the idempotency key as its first argument`;
  } else {
    return manualOnly(target, 'not an App Router route.ts, a Pages API route or a "use server" module: wrap the handler with withIdempotency / withPagesIdempotency / idempotentAction by hand');
  }
  if (outcome !== 'wired' && (outcome.stale !== undefined || outcome.manual.length > 0)) return outcome;
  // Callers (components fetching the route, calling the Server Action) are the client pass's: wired or listed there.
  const out: TransformOutcome = { edits: outcome === 'wired' ? [] : [{ action: target.action, file: target.file, summary }], manual: [] };
  const keyed = keyWrappedHandler(sf, target, context, kind);
  out.edits.push(...keyed.edits);
  out.manual.push(...keyed.manual);
  return out;
};

/**
 * The provider calls of the function apply wrapped are keyed from its claim (stripeKey.ts, keyHandlerCalls): a route
 * handler's and a Pages API route's first parameter is the request (`idempotencyOf(request)`); a Server Action has
 * none, and reads the claim it runs in (`idempotencyOf()`). Only a function apply can read: the renamed declaration,
 * the wrapped const's function, or (Pages) the function the default export wraps.
 */
function keyWrappedHandler(sf: SourceFile, target: WiringTarget, context: Parameters<Transform>[2], kind: NextKind): TransformOutcome {
  const handler = wrappedFunction(sf, target, kind);
  if (!handler) return { edits: [], manual: [] };
  if (kind === 'action') return keyHandlerCalls(sf, handler, target, context, 'idempotencyOf()');
  const request = handler.getParameters()[0]?.getNameNode();
  return keyHandlerCalls(sf, handler, target, context, request && Node.isIdentifier(request) ? `idempotencyOf(${request.getText()})` : undefined);
}

type WrappedFunction = FunctionDeclaration | ArrowFunction | FunctionExpression;

const asFunction = (node: Node | undefined): WrappedFunction | undefined => (node && (Node.isFunctionDeclaration(node) || Node.isArrowFunction(node) || Node.isFunctionExpression(node)) ? node : undefined);

/** The function inside apply's wrapper for this target, found again in the edited file. */
export function wrappedFunction(sf: SourceFile, target: WiringTarget, kind: NextKind): WrappedFunction | undefined {
  if (kind === 'pages') {
    const expression = sf.getExportAssignment((d) => !d.isExportEquals())?.getExpression();
    const argument = isWrap(expression, 'withPagesIdempotency', target.codeName) ? expression.getArguments()[1] : undefined;
    if (argument && Node.isIdentifier(argument)) return sf.getFunction(argument.getText()) ?? asFunction(sf.getVariableDeclaration(argument.getText())?.getInitializer());
    return asFunction(argument);
  }
  const exported = kind === 'route' ? (target.method ?? 'POST').toUpperCase() : serverActionName(target);
  if (exported === undefined) return undefined;
  const wrapper = kind === 'route' ? 'withIdempotency' : 'idempotentAction';
  const wrapped = exportedVariable(sf, exported)?.getInitializer();
  const argument = wrapped && isWrap(wrapped, wrapper, target.codeName) ? wrapped.getArguments()[1] : undefined;
  if (argument && Node.isIdentifier(argument)) return sf.getFunction(argument.getText());
  if (kind === 'action' && argument && Node.isArrowFunction(argument)) {
    // A built action (wrapBuiltAction): the function its builder was given, which the forwarder reaches.
    const body = argument.getBody();
    const forwarded = Node.isCallExpression(body) && Node.isIdentifier(body.getExpression()) ? sf.getVariableDeclaration(body.getExpression().getText())?.getInitializer() : undefined;
    if (forwarded && Node.isCallExpression(forwarded)) return builtFunction(forwarded);
  }
  return asFunction(argument);
}

/** The last function among a builder chain's arguments: `validatedAction(schema, fn)`, `client.schema(s).action(fn)`. */
function builtFunction(call: CallExpression): WrappedFunction | undefined {
  for (let node: Node = call; Node.isCallExpression(node) || Node.isPropertyAccessExpression(node); node = node.getExpression()) {
    if (!Node.isCallExpression(node)) continue;
    const fn = [...node.getArguments()].reverse().map(asFunction).find((f) => f !== undefined);
    if (fn) return fn;
  }
  return undefined;
}

/**
 * Replaces a node's text verbatim: ts-morph's replaceWithText re-indents every following line of a multi-line
 * replacement, which would shift the user's own code. Forgets the file's wrapped nodes: callers look things up again.
 */
export function replaceRaw(node: Node, text: string): void {
  node.getSourceFile().replaceText([node.getStart(), node.getEnd()], text);
}

/** Whether the file's text already carries apply's wrapper for the target (written now or by an earlier run). */
export function wiredIn(text: string, target: WiringTarget): boolean {
  return new RegExp(`idempotency\\.(?:withIdempotency|withPagesIdempotency|idempotentAction)\\(\\s*['"\`]${target.codeName}['"\`]`).test(text);
}
