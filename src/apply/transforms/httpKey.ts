import { Node, SyntaxKind, ts, type Block, type CallExpression, type Expression, type Identifier, type NewExpression, type ObjectLiteralExpression, type SourceFile } from 'ts-morph';
import { httpProviderCalls, KEY_HEADERS, providerCalls } from '../../findings/providerCalls.js';
import type { PaymentProvider } from '../../inspect/types.js';
import { appendProperty, ensureNamedImport, morphNode } from '../sourceFile.js';
import type { WiringTarget } from '../types.js';
import type { KeyedHandler } from './adyenKey.js';
import type { TransformContext, TransformOutcome } from './context.js';
import { guarded, guardedProperty } from './guardedKey.js';
import { perCallKey, type PerCallKey } from './perCallKey.js';
import { KEYED_SDKS, removeUnusedImports } from './stableParams.js';

/**
 * The providers.ts helper giving the derived value of the provider's idempotency header (KEY_HEADERS) on a raw-HTTP call: the
 * same key the SDK transforms pass (stripeRequestOptions and adyenIdempotency are providerKey; PayPal's SDK sends
 * paypalRequestId as this very header). providerKey is in every providers.ts; paypalRequestId where PayPal is.
 */
export const HTTP_KEY_HELPER: Partial<Record<PaymentProvider, string>> = { stripe: 'providerKey', adyen: 'providerKey', paypal: 'paypalRequestId' };

/** Modules whose clients take the headers in the options: `got.post(url, options)`, `ky.post(url, options)`. */
const OPTIONS_MODULES = /^(got|ky|ofetch|undici|node-fetch|cross-fetch)$/;
/** Types and modules of axios-shaped clients: `client.post(url, data, config)`, `client(config)`. */
const AXIOS_TYPE = /\b(AxiosInstance|AxiosStatic|Axios|HttpService)\b/;
const OPTIONS_TYPE = /\b(Got|KyInstance)\b/;

type ClientKind = 'axios' | 'options' | undefined;

/** Whether the handler makes raw-HTTP calls to `provider` (so a missing SDK call is no manual step). */
export function hasHttpProviderCalls(sf: SourceFile, handler: KeyedHandler, provider: string | undefined): boolean {
  return httpCallsIn(sf, handler).some((c) => provider === undefined || c.provider === provider);
}

function httpCallsIn(sf: SourceFile, handler: KeyedHandler) {
  const source = { rel: sf.getFilePath(), text: sf.getFullText(), sf: sf.compilerNode, dependencies: KEYED_SDKS };
  return httpProviderCalls(source).flatMap((f) => {
    const call = morphNode(handler, f.call, Node.isCallExpression);
    return call ? [{ ...f, call }] : [];
  });
}

/**
 * Raw-HTTP provider calls inside a protected handler (fetch, undici, got, ky, axios and its instances, as the
 * inspector matches them) without the provider's idempotency header get it, valued with the key derived from the
 * handler's idempotency context: the same header on every re-execution of the same request. The steps continue
 * after the handler's SDK calls of that provider, so no two requests of one handler share a key.
 */
export function keyHttpCalls(sf: SourceFile, handler: KeyedHandler, target: WiringTarget, context: TransformContext, ensureContext: () => string | undefined): TransformOutcome {
  const out: TransformOutcome = { edits: [], manual: [] };
  const found = httpCallsIn(sf, handler).filter((c) => HTTP_KEY_HELPER[c.provider] !== undefined);
  // paypalRequestId is in providers.ts only when the design names PayPal (the action's provider).
  for (const c of found.filter((c) => c.provider === 'paypal' && target.provider !== 'paypal' && !c.keyed)) {
    out.manual.push({ action: target.action, file: target.file, line: c.call.getStartLineNumber(), reason: `the raw-HTTP paypal ${c.operation} call needs the PayPal-Request-Id header from paypalRequestId(idempotencyOf(request)); the action's provider is not PayPal, so providers.ts may not have it: set "provider": "paypal" for the action (or add "paypal" to payments), regenerate, then apply` });
  }
  const calls = found.filter((c) => c.provider !== 'paypal' || target.provider === 'paypal');
  // A key made anew on each call (`headers.set('Idempotency-Key', randomUUID())`) is replaced as an absent one is added.
  const open = calls.filter((c) => !c.keyed || (c.keyPerAttempt && c.key !== undefined));
  if (open.length === 0) return out;
  const sdkSource = { rel: sf.getFilePath(), text: sf.getFullText(), sf: sf.compilerNode, dependencies: KEYED_SDKS };
  const start = handler.getStart();
  const end = handler.getEnd();
  const sdkCount = (p: PaymentProvider) => providerCalls(sdkSource).filter((c) => c.provider === p && c.call.getStart(sf.compilerNode) >= start && c.call.getEnd() <= end).length;
  const plan = open.map((item) => {
    const same = calls.filter((c) => c.provider === item.provider);
    const before = sdkCount(item.provider);
    const step = same.length + before > 1 ? before + same.indexOf(item) : undefined;
    const perCall = item.keyed && item.key ? perCallKey(item.key, handler.compilerNode, sf.compilerNode) : undefined;
    return { ...item, header: { name: KEY_HEADERS[item.provider]!, helper: HTTP_KEY_HELPER[item.provider]! }, step, perCall, line: item.call.getStartLineNumber(), describe: `${item.provider} ${item.operation}` };
  });
  if (!context.scaffoldModules.has('providers')) {
    for (const item of plan) out.manual.push({ action: target.action, file: target.file, line: item.line, reason: `the raw-HTTP ${item.describe} call needs the ${item.header.name} header from ${item.header.helper}(idempotencyOf(request)); the scaffold has no providers.ts: regenerate with "${item.provider}" in payments, then apply` });
    return out;
  }
  // Where each header goes is decided before any edit, so a call left manual adds no import or context.
  const placed = plan.map((item) => ({ item, place: item.perCall ? replacePerCallKey(item.perCall, handler) : httpKeyPlacement(item.call, sf) }));
  const editable = placed.filter((p) => typeof p.place !== 'string');
  for (const { item, place } of placed) {
    const sends = item.perCall ? `sends a ${item.header.name} header made anew on each call (\`${item.key!.getText(sf.compilerNode)}\`), so a retried request is a new one to ${item.provider}; it needs` : 'needs';
    if (typeof place === 'string') out.manual.push({ action: target.action, file: target.file, line: item.line, reason: `the raw-HTTP ${item.describe} call ${sends} the ${item.header.name} header set to ${item.header.helper}(idempotencyOf(request)); not edited because ${place}` });
  }
  if (editable.length === 0) return out;
  const name = ensureContext();
  const helpers = [...new Set(editable.map((p) => p.item.header.helper))];
  if (name === undefined || !helpers.every((helper) => ensureNamedImport(sf, context.style.specifier('providers'), helper))) {
    for (const { item } of editable) out.manual.push({ action: target.action, file: target.file, line: item.line, reason: `the raw-HTTP ${item.describe} call needs the ${item.header.name} header set to ${item.header.helper}(idempotencyOf(request)); the handler has no named request parameter, its body is an expression, or a name is taken` });
    return out;
  }
  const q = context.style.quote === 'double' ? '"' : "'";
  for (const { item, place } of editable) {
    if (typeof place === 'string') continue;
    const value = `${item.header.helper}(${name}${item.step !== undefined ? `, ${item.step}` : ''})`;
    place(`${q}${item.header.name}${q}`, value);
    const instead = item.perCall ? ' instead of one made anew on each call' : '';
    out.edits.push({ action: target.action, file: target.file, summary: `sends the derived ${item.provider} idempotency key as the ${item.header.name} header of ${item.describe}${instead} (line ${item.line})` });
  }
  if (editable.some((p) => p.item.perCall)) removeUnusedImports(sf, new Set(editable.flatMap((p) => (p.item.perCall ? identifiersIn(p.item.perCall.part) : []))));
  return out;
}

/** The per-call part of a key (perCallKey: the key, its local's initializer, or the fallback after the caller's key) becomes the derived one. */
function replacePerCallKey(perCall: PerCallKey, handler: KeyedHandler): Place | string {
  if (perCall.refused !== undefined) return perCall.refused;
  const part = morphNode(handler, perCall.part);
  return part ? (_header, value) => void part.replaceWithText(value) : 'its key is not written inside the handler';
}

const identifiersIn = (node: ts.Node): string[] => (ts.isIdentifier(node) ? [node.text] : node.getChildren().flatMap(identifiersIn));

/** Adds the header (its name as a string literal) with the key's value: with `guard`, only when the guard is set (see guardedKey.ts). */
type Place = (header: string, value: string, guard?: string) => void;

/** How the header joins the call, or why apply leaves it to the user; decided before any edit. */
export function httpKeyPlacement(call: CallExpression, sf: SourceFile): Place | string {
  const callee = call.getExpression();
  const args = call.getArguments();
  // fetch(url, init), undici request(url, options), got(url, options), axios(url, config); axios({ url, method,
  // headers }) and got({ url, method }) take one config object. The inspector matches only these callees.
  if (Node.isIdentifier(callee)) return args.length === 1 ? intoOptions(args[0], 'its one config argument is not an object literal') : intoOptions(args[1], 'its request options are not an object literal');
  if (!Node.isPropertyAccessExpression(callee)) return 'its callee is not a client method apply knows';
  const kind = clientKind(callee.getExpression(), sf);
  const receiver = callee.getExpression().getText();
  if (kind === undefined) return `apply cannot tell which HTTP client ${receiver} is (axios takes the headers third, got and ky second)`;
  if (kind === 'options') {
    if (args.length === 1) return (header, value, guard) => void call.addArgument(guarded(`{ headers: { ${header}: ${value} } }`, guard));
    return intoOptions(args[1], 'its request options are not an object literal');
  }
  // axios: post(url, data, config); an absent body is passed as undefined, as axios reads it.
  if (args.length === 1) return (header, value, guard) => void call.addArguments(['undefined', guarded(`{ headers: { ${header}: ${value} } }`, guard)]);
  if (args.length === 2) return (header, value, guard) => void call.addArgument(guarded(`{ headers: { ${header}: ${value} } }`, guard));
  return intoOptions(args[2], 'its request config is not an object literal');
}

/** The header into an options literal's `headers` literal, or a `headers` property when it has none. */
function intoOptions(given: Node | undefined, notLiteral: string): Place | string {
  // `const config = { headers: … }; axios.post(url, body, config)`: the literal, when this call alone sends it.
  const local = given && Node.isIdentifier(given) ? localObject(given) : undefined;
  if (typeof local === 'string') return local;
  const options = local?.init ?? given;
  if (!options || !Node.isObjectLiteralExpression(options)) return notLiteral;
  const headers = options.getProperty('headers');
  if (!headers) {
    // `{ ...defaults, method: 'POST' }`: a headers property of ours would replace the spread one (Authorization).
    if (options.getProperties().some((p) => Node.isSpreadAssignment(p))) return 'its options spread another object whose headers a new headers property would replace';
    return (header, value, guard) => appendProperty(options, guardedProperty(`headers: { ${header}: ${value} }`, guard));
  }
  const initializer = Node.isPropertyAssignment(headers) ? headers.getInitializer() : Node.isShorthandPropertyAssignment(headers) ? headers.getNameNode() : undefined;
  if (initializer && Node.isIdentifier(initializer)) return intoLocalHeaders(initializer);
  if (initializer && Node.isNewExpression(initializer)) return intoHeadersInstance(initializer);
  if (!initializer || !Node.isObjectLiteralExpression(initializer)) return 'its headers are not an object literal';
  return (header, value, guard) => appendProperty(initializer, guardedProperty(`${header}: ${value}`, guard));
}

/** `new Headers()` / `new Headers({ … })` written in the call: the header joins its literal. */
function intoHeadersInstance(headers: NewExpression): Place | string {
  if (headers.getExpression().getText() !== 'Headers') return 'its headers are not an object literal';
  const [init] = headers.getArguments();
  if (!init) return (header, value, guard) => void headers.addArgument(`{ ${guardedProperty(`${header}: ${value}`, guard)} }`);
  if (Node.isObjectLiteralExpression(init)) return (header, value, guard) => appendProperty(init, guardedProperty(`${header}: ${value}`, guard));
  return 'its Headers instance is made from another object, which may be shared';
}

/**
 * `headers` naming a Headers object or a headers literal declared in the function before the call and sent by no
 * other call (which would then share the key): `headers.set(…)` goes in just before the call's statement, or the
 * property joins the literal. Anything else (a parameter, a module constant, a helper's result) is the user's.
 */
function intoLocalHeaders(name: Identifier): Place | string {
  const text = name.getText();
  const local = localObject(name, 'headers');
  if (typeof local === 'string') return local;
  const { init } = local;
  if (Node.isObjectLiteralExpression(init)) return (header, value, guard) => appendProperty(init, guardedProperty(`${header}: ${value}`, guard));
  // The statement holding the call, in the function that declares the Headers object (not inside a callback of it).
  let statement: Node = name;
  while (!Node.isBlock(statement.getParentOrThrow())) {
    statement = statement.getParentOrThrow();
    if (Node.isFunctionLikeDeclaration(statement)) return `its Headers object \`${text}\` is sent from a callback, where a set before it would not run per call`;
  }
  const block = statement.getParentOrThrow() as Block;
  const at = statement.getChildIndex();
  return (header, value, guard) => void block.insertStatements(at, `${guard === undefined ? '' : `if (${guard}) `}${text}.set(${header}, ${value});`);
}

/**
 * The object literal (or, for `headers`, the Headers object) a name holds: declared in a function around it before
 * the call, and sent by no other call, which would then share the key. Otherwise why apply leaves it alone.
 */
function localObject(name: Identifier, what: 'headers' | 'options' = 'options'): { init: ObjectLiteralExpression | NewExpression } | string {
  const text = name.getText();
  const declaredIn = (fn: Node) => fn.getDescendantsOfKind(SyntaxKind.VariableDeclaration).filter((d) => d.getName() === text && d.getEnd() <= name.getStart()).at(-1);
  const fn = name.getAncestors().find((n) => Node.isFunctionLikeDeclaration(n) && declaredIn(n) !== undefined);
  const init = fn && declaredIn(fn)?.getInitializer();
  if (!fn || !init) return `its ${what} \`${text}\` are made outside the function that sends them`;
  const isHeaders = what === 'headers' && Node.isNewExpression(init) && init.getExpression().getText() === 'Headers';
  if (!isHeaders && !Node.isObjectLiteralExpression(init)) return `its ${what} \`${text}\` are not ${what === 'headers' ? 'a Headers object or ' : ''}an object literal`;
  const sent = fn.getDescendantsOfKind(SyntaxKind.Identifier).filter((id) => id.getText() === text && sends(id));
  if (sent.length > 1) return `its ${what} \`${text}\` are sent by another call too, which would then send the same key`;
  return { init: init as ObjectLiteralExpression | NewExpression };
}

/** An identifier handed to a call as a value: an argument, or a property's value in an options literal. */
function sends(id: Identifier): boolean {
  const parent = id.getParent();
  return (Node.isCallExpression(parent) && parent.getArguments().includes(id)) || Node.isShorthandPropertyAssignment(parent) || (Node.isPropertyAssignment(parent) && parent.getInitializer() === id);
}

/** Which kind of client a receiver is: axios (and its instances, Nest's HttpService), got / ky, or unknown. */
function clientKind(receiver: Expression, sf: SourceFile): ClientKind {
  if (Node.isIdentifier(receiver)) {
    const name = receiver.getText();
    return identifierKind(name, sf) ?? (name === 'axios' ? 'axios' : /^(got|ky|ofetch|\$fetch)$/.test(name) ? 'options' : undefined);
  }
  // this.http: a class property or constructor parameter property, by its type or initializer.
  if (Node.isPropertyAccessExpression(receiver) && receiver.getExpression().getKind() === SyntaxKind.ThisKeyword) {
    const name = receiver.getName();
    const cls = receiver.getFirstAncestorByKind(SyntaxKind.ClassDeclaration) ?? receiver.getFirstAncestorByKind(SyntaxKind.ClassExpression);
    if (!cls) return undefined;
    const property = cls.getProperty(name);
    if (property) return declaredKind(property.getTypeNode()?.getText(), property.getInitializer(), sf);
    const parameter = cls.getConstructors().flatMap((c) => c.getParameters()).find((p) => p.getName() === name && p.isParameterProperty());
    return parameter ? declaredKind(parameter.getTypeNode()?.getText(), undefined, sf) : undefined;
  }
  return undefined;
}

/** A name bound in the file: an import of an HTTP client module, or a variable or parameter whose type or initializer says. */
function identifierKind(name: string, sf: SourceFile, depth = 0): ClientKind {
  if (depth > 3) return undefined;
  for (const declaration of sf.getImportDeclarations()) {
    const bound = [declaration.getDefaultImport(), declaration.getNamespaceImport(), ...declaration.getNamedImports().map((n) => n.getAliasNode() ?? n.getNameNode())].some((n) => n?.getText() === name);
    if (bound) return moduleKind(declaration.getModuleSpecifierValue());
  }
  const variable = sf.getDescendantsOfKind(SyntaxKind.VariableDeclaration).find((v) => v.getName() === name);
  if (variable) return declaredKind(variable.getTypeNode()?.getText(), variable.getInitializer(), sf, depth);
  const parameter = sf.getDescendantsOfKind(SyntaxKind.Parameter).find((p) => p.getName() === name);
  return parameter ? declaredKind(parameter.getTypeNode()?.getText(), undefined, sf, depth) : undefined;
}

const moduleKind = (module: string): ClientKind => (module === 'axios' ? 'axios' : OPTIONS_MODULES.test(module) ? 'options' : undefined);

function declaredKind(type: string | undefined, initializer: Expression | undefined, sf: SourceFile, depth = 0): ClientKind {
  if (type !== undefined) return AXIOS_TYPE.test(type) ? 'axios' : OPTIONS_TYPE.test(type) ? 'options' : undefined;
  if (!initializer || !Node.isCallExpression(initializer)) return undefined;
  const callee = initializer.getExpression();
  // require('axios'); axios.create({ baseURL }), got.extend({ prefixUrl }), ky.create(…).
  if (Node.isIdentifier(callee) && callee.getText() === 'require') {
    const arg = initializer.getArguments()[0];
    return arg && Node.isStringLiteral(arg) ? moduleKind(arg.getLiteralValue()) : undefined;
  }
  if (Node.isPropertyAccessExpression(callee) && /^(create|extend)$/.test(callee.getName())) {
    const base = callee.getExpression();
    return Node.isIdentifier(base) ? (identifierKind(base.getText(), sf, depth + 1) ?? (base.getText() === 'axios' ? 'axios' : /^(got|ky)$/.test(base.getText()) ? 'options' : undefined)) : undefined;
  }
  return undefined;
}
