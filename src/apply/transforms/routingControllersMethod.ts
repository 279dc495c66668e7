import { Node, SyntaxKind, ts, type Decorator, type MethodDeclaration, type ParameterDeclaration, type SourceFile } from 'ts-morph';
import { bindsName, ensureNamedImport } from '../sourceFile.js';
import type { WiringTarget } from '../types.js';
import { clientKeyStep, manualOnly, type TransformContext, type TransformOutcome } from './context.js';
import { NOT_JSON, returnedExpressions, visiblyJson, wrapBody } from './plainWrap.js';

/** The scaffold module apply writes for routing-controllers methods (renderControllerClaim). */
export const CONTROLLER_CLAIM_MODULE = 'controllerClaim';
const RUN = 'runOnceInController';
const MODULE = 'routing-controllers';
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
/** An HTTP header name (RFC 9110 token): anything else from the config never reaches the code. */
const HEADER = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const print = (node: ts.Node) => ts.createPrinter().printNode(ts.EmitHint.Expression, node, ts.createSourceFile('x.ts', '', ts.ScriptTarget.ES2022));

/** What the method should become, for the steps apply leaves: the same call it would write. */
const snippet = (codeName: string, header: string, scoped: boolean, specifier: string) =>
  `take the key with @HeaderParam('${header}', { type: String })${scoped ? ', the caller with @CurrentUser()' : ''} and the response with @Res(), then wrap its body as \`return ${RUN}('${codeName}', { ${scoped ? 'caller, ' : ''}key, body, response }, async () => { … })\` (from ${specifier}), which answers a repeat with Idempotent-Replayed: true, a missing key 400, a duplicate in flight 409 with Retry-After, other input under the same key 422 and a store outage 503 with Retry-After as routing-controllers HttpErrors`;

/** The routing-controllers name a decorator stands for (aliases followed), or undefined when it comes from elsewhere. */
function libraryName(sf: SourceFile, local: string): string | undefined {
  for (const declaration of sf.getImportDeclarations()) {
    if (declaration.getModuleSpecifierValue() !== MODULE) continue;
    const named = declaration.getNamedImports().find((n) => (n.getAliasNode() ?? n.getNameNode()).getText() === local);
    if (named) return named.getName();
  }
  return undefined;
}

const decoratorNamed = (sf: SourceFile, node: { getDecorators(): Decorator[] }, name: string) => node.getDecorators().find((d) => libraryName(sf, d.getName()) === name);

/** The decorated method whose decorators or name start on `line`. */
function methodAt(sf: SourceFile, line: number): MethodDeclaration | undefined {
  for (const cls of sf.getClasses()) {
    for (const method of cls.getMethods()) {
      const decorators = method.getDecorators();
      if (decorators.length === 0) continue;
      const first = Math.min(method.getStartLineNumber(), ...decorators.map((d) => d.getStartLineNumber()));
      if (line >= first && line <= method.getNameNode().getStartLineNumber()) return method;
    }
  }
  return undefined;
}

/** Whether the file already runs this action's work through the claim: the method is wired. */
export const wiredInController = (sf: SourceFile, codeName: string) =>
  sf.getDescendantsOfKind(SyntaxKind.CallExpression).some((call) => {
    const first = call.getArguments()[0];
    return call.getExpression().getText() === RUN && first !== undefined && Node.isStringLiteral(first) && first.getLiteralValue() === codeName;
  });

const identifierName = (p: ParameterDeclaration) => (Node.isIdentifier(p.getNameNode()) && !p.isRestParameter() ? p.getName() : undefined);
const literalArgument = (p: ParameterDeclaration, decorator: string, sf: SourceFile) => {
  const arg = decoratorNamed(sf, p, decorator)?.getArguments()[0];
  return arg && Node.isStringLiteral(arg) ? arg.getLiteralValue() : undefined;
};

/** `{ id, orderId: order }` from `@Param('id') id, @Param('orderId') order`, or the one `@Params()` object. */
function namedValues(sf: SourceFile, params: readonly ParameterDeclaration[], one: string, all: string): ts.Expression | undefined {
  const f = ts.factory;
  const whole = params.find((p) => decoratorNamed(sf, p, all));
  if (whole) {
    const name = identifierName(whole);
    return name ? f.createIdentifier(name) : undefined;
  }
  const properties: ts.ObjectLiteralElementLike[] = [];
  for (const param of params) {
    if (!decoratorNamed(sf, param, one)) continue;
    const name = literalArgument(param, one, sf);
    const local = identifierName(param);
    if (name === undefined || local === undefined) return undefined;
    properties.push(name === local ? f.createShorthandPropertyAssignment(local) : f.createPropertyAssignment(IDENTIFIER.test(name) ? f.createIdentifier(name) : f.createStringLiteral(name, true), f.createIdentifier(local)));
  }
  return properties.length > 0 ? f.createObjectLiteralExpression(properties, false) : undefined;
}

/** Whether the method's body mentions the parameter (or it has no plain name): it may answer through it. */
function usedInBody(method: MethodDeclaration, param: ParameterDeclaration): boolean {
  const name = identifierName(param);
  return name === undefined || (method.getBody()?.getDescendantsOfKind(SyntaxKind.Identifier).some((i) => i.getText() === name) ?? false);
}

/** A name none of the method's own identifiers uses, for an added parameter. */
function freeName(method: MethodDeclaration, candidates: readonly string[]): string | undefined {
  const used = new Set(method.getDescendants().flatMap((d) => (Node.isIdentifier(d) ? [d.getText()] : [])));
  return candidates.find((name) => !used.has(name));
}

/** The local name the file imports `name` from `specifier` under, if it does. */
function importedAs(sf: SourceFile, specifier: string, name: string): string | undefined {
  for (const declaration of sf.getImportDeclarations()) {
    if (declaration.getModuleSpecifierValue() !== specifier || declaration.isTypeOnly()) continue;
    const named = declaration.getNamedImports().find((n) => n.getName() === name);
    if (named) return (named.getAliasNode() ?? named.getNameNode()).getText();
  }
  return undefined;
}

/** Whether `name` from `specifier` can be used in the file: imported already, or free to import. */
const importable = (sf: SourceFile, specifier: string, name: string) => importedAs(sf, specifier, name) !== undefined || !bindsName(sf, name);

/** The local name of a routing-controllers decorator the file imports, added to its import when missing (importable() first). */
function decoratorLocal(sf: SourceFile, name: string): string {
  const local = importedAs(sf, MODULE, name);
  if (local !== undefined) return local;
  // Into the file's own import of routing-controllers, in order when its names are sorted.
  const declaration = sf.getImportDeclarations().find((d) => d.getModuleSpecifierValue() === MODULE && !d.isTypeOnly() && d.getNamespaceImport() === undefined);
  if (!declaration) {
    ensureNamedImport(sf, MODULE, name);
    return name;
  }
  const names = declaration.getNamedImports().map((n) => n.getName());
  const sorted = names.every((n, i) => i === 0 || names[i - 1]!.localeCompare(n) <= 0);
  const at = sorted ? names.filter((n) => n.localeCompare(name) < 0).length : names.length;
  declaration.insertNamedImport(at, name);
  return name;
}

/** Why the method's result would reach a repeat differently, or undefined when its JSON form is its answer. */
function resultProblem(sf: SourceFile, method: MethodDeclaration): string | undefined {
  for (const name of ['Redirect', 'Render', 'ContentType']) {
    if (decoratorNamed(sf, method, name)) return `it answers through @${name}(), and a repeat gets the stored JSON of its result`;
  }
  const declared = method.getReturnTypeNode()?.getText();
  if (declared !== undefined && NOT_JSON.test(declared)) return `its declared result ${declared} is not JSON, and a repeat gets the stored JSON of its result`;
  if (!returnedExpressions(method).every(visiblyJson)) return 'a repeat gets the stored JSON of its result, and the result is not visibly JSON (a Date, a class, a value apply cannot see)';
  // routing-controllers answers undefined with 404 (or @OnUndefined's status) and null with 204: the stored JSON of
  // undefined is null, so a repeat would get another status than the first request.
  const returned = method.getReturnType();
  const awaited = returned.getTargetType()?.getText() === 'Promise<T>' ? returned.getTypeArguments()[0] : returned;
  const parts = awaited?.isUnion() ? awaited.getUnionTypes() : awaited ? [awaited] : [];
  if (parts.some((t) => t.isUndefined() || t.getText() === 'void')) return 'it can return nothing, which routing-controllers answers 404 (or @OnUndefined\'s status) while a repeat would get the stored null (204): return a value on every path';
  return undefined;
}

/**
 * A routing-controllers controller method (`@Post('/') async create(@Body() body: CreateOrder, @CurrentUser() user)`):
 * routing-controllers runs `@UseBefore` middleware before its body parser and authorizationChecker, so the key is
 * claimed inside the method, after both. The method takes the key through `@HeaderParam(<the config's header>)` (an
 * existing one for that header is reused), the caller through `@CurrentUser()` (added when the project configures a
 * currentUserChecker), the response through `@Res()` (an existing one the body leaves alone is reused), and its body
 * runs inside `runOnceInController('<action>', { caller, key, body, params, query, response }, async () => …)` from
 * the scaffold (renderControllerClaim), which answers the core's refusals and errors as routing-controllers
 * HttpErrors (Retry-After set on the response for 409 in flight and 503) and returns the JSON form of the result, so
 * a repeat answers what the first did, with Idempotent-Replayed: true on the response.
 */
export function wireRoutingControllersMethod(sf: SourceFile, target: WiringTarget, context: TransformContext): TransformOutcome {
  const header = context.routingControllers?.header ?? 'Idempotency-Key';
  // As the generated settings read it: only a global action goes without a caller.
  const scoped = target.scope !== 'global';
  const specifier = context.style.specifier(CONTROLLER_CLAIM_MODULE);
  const how = snippet(target.codeName, HEADER.test(header) ? header : 'Idempotency-Key', scoped, specifier);
  const prefix = 'routing-controllers runs @UseBefore middleware before its body parser and authorizationChecker, so the key is claimed inside the method';
  if (wiredInController(sf, target.codeName)) return { edits: [], manual: [] };
  const method = methodAt(sf, target.line) ?? (context.anyLine ? sf.getClasses().flatMap((c) => c.getMethods()).find((m) => m.getName() === target.codeName || m.getName() === target.action) : undefined);
  if (!method) return { edits: [], manual: [], stale: `${target.file} changed since inspection: no controller method of ${target.action} starts at line ${target.line}` };
  const line = method.getDecorators()[0]?.getStartLineNumber() ?? method.getStartLineNumber();
  const refuse = (why: string) => manualOnly(target, `${prefix}, and ${why}: ${how}`, line);
  if (!/\.(c|m)?tsx?$/.test(target.file)) return refuse('apply edits controller methods in TypeScript only (JavaScript needs Babel\'s legacy decorators for parameter decorators, which apply does not write)');
  if (!IDENTIFIER.test(target.codeName) || !HEADER.test(header)) return refuse(`the action's code name or the key header (${JSON.stringify(header)}) is not one apply can print`);
  if (!method.isAsync()) return refuse('it is not async (the claim is awaited): make it async');
  if (method.isGenerator() || !method.getBody()) return refuse('it is a generator or has no body');
  const params = method.getParameters();
  // An unused @Res() is the one the claim sets its headers on; one the body uses may answer through it (a status, a
  // header, a body sent directly), which a repeat would not replay.
  if (params.some((p) => (decoratorNamed(sf, p, 'Res') || decoratorNamed(sf, p, 'Ctx')) && usedInBody(method, p))) return refuse('it uses the response (@Res() / @Ctx()) and may answer through it, which a repeat would not replay');
  const bodyParam = params.find((p) => decoratorNamed(sf, p, 'Body'));
  const body = bodyParam ? identifierName(bodyParam) : undefined;
  if (!body) return refuse('apply cannot tell its input: it has no @Body() parameter bound to a name (the body is what a reused key is checked against)');
  const result = resultProblem(sf, method);
  if (result) return refuse(result);
  const userParam = params.find((p) => decoratorNamed(sf, p, 'CurrentUser'));
  let caller = scoped && userParam ? identifierName(userParam) : undefined;
  if (scoped && userParam && !caller) return refuse('its @CurrentUser() parameter is destructured, so apply cannot pass the caller on');
  let addCaller: string | undefined;
  if (scoped && !caller) {
    if (!context.routingControllers?.currentUserChecker) return refuse(`its keys are scoped per ${target.scope ?? 'caller'}, and the method has no @CurrentUser() parameter and the project configures no currentUserChecker (createExpressServer / useExpressServer / createKoaServer options) to give it one: add either, or set "scope": "global" for the action`);
    addCaller = freeName(method, ['caller', 'currentUser', 'idempotencyCaller']);
    if (!addCaller) return refuse('apply finds no free name for an added @CurrentUser() parameter');
    caller = addCaller;
  }
  const keyed = target.keySource !== 'derived';
  const headerParam = keyed ? params.find((p) => literalArgument(p, 'HeaderParam', sf)?.toLowerCase() === header.toLowerCase()) : undefined;
  let key = headerParam ? identifierName(headerParam) : undefined;
  if (headerParam && !key) return refuse(`its @HeaderParam('${header}') parameter is destructured`);
  const addKey = keyed && !key ? freeName(method, ['idempotencyKey', 'idempotencyKeyHeader']) : undefined;
  if (keyed && !key && !addKey) return refuse('apply finds no free name for an added @HeaderParam() parameter');
  key ??= addKey;
  const responseParam = params.find((p) => decoratorNamed(sf, p, 'Res'));
  const addResponse = responseParam ? undefined : freeName(method, ['response', 'idempotencyResponse']);
  const response = responseParam ? identifierName(responseParam) : addResponse;
  if (!response) return refuse('apply finds no free name for an added @Res() parameter');

  // Route and query values go into the fingerprint (and a derived key) as the middleware reads req.params / req.query.
  for (const [one, all] of [['Param', 'Params'], ['QueryParam', 'QueryParams']] as const) {
    if (params.some((p) => decoratorNamed(sf, p, one) || decoratorNamed(sf, p, all)) && !namedValues(sf, params, one, all)) return refuse(`apply cannot tell the names of its @${one}() values (a name that is not a string literal, or a destructured parameter)`);
  }
  if ((addKey && !importable(sf, MODULE, 'HeaderParam')) || (addCaller && !importable(sf, MODULE, 'CurrentUser')) || (addResponse && !importable(sf, MODULE, 'Res'))) return refuse('the file binds HeaderParam, CurrentUser or Res to something else');
  if (!importable(sf, specifier, RUN)) return refuse(`the file already has its own binding named "${RUN}"`);

  // Everything checked: now the edits, imports first (they may forget nodes, so the method is found again after).
  const position = sf.getClasses().flatMap((c) => c.getMethods()).indexOf(method);
  const headerDecorator = addKey ? decoratorLocal(sf, 'HeaderParam') : undefined;
  const userDecorator = addCaller ? decoratorLocal(sf, 'CurrentUser') : undefined;
  const responseDecorator = addResponse ? decoratorLocal(sf, 'Res') : undefined;
  ensureNamedImport(sf, specifier, RUN);
  const again = method.wasForgotten() ? sf.getClasses().flatMap((c) => c.getMethods())[position]! : method;
  const f = ts.factory;
  // After an optional parameter a required one is an error: the added ones are optional there.
  const optional = again.getParameters().some((p) => p.hasQuestionToken() || p.hasInitializer());
  // `type: String`: routing-controllers reads the parameter's type from the decorator metadata, which is Object for
  // `string | undefined`, and would parse the key as JSON (a 400 for every plain key).
  const keyOptions = print(f.createObjectLiteralExpression([f.createPropertyAssignment('type', f.createIdentifier('String'))], false));
  if (addCaller && userDecorator) again.addParameter({ name: addCaller, ...(optional ? { hasQuestionToken: true } : {}), type: 'unknown', decorators: [{ name: userDecorator, arguments: [] }] });
  if (addKey && headerDecorator) {
    again.addParameter({ name: addKey, ...(optional ? { hasQuestionToken: true, type: 'string' } : { type: 'string | undefined' }), decorators: [{ name: headerDecorator, arguments: [print(f.createStringLiteral(header, context.style.quote === 'single')), keyOptions] }] });
  }
  // `unknown`: the claim only sets headers on it, through whichever of Express's or Koa's response it is.
  if (addResponse && responseDecorator) again.addParameter({ name: addResponse, ...(optional ? { hasQuestionToken: true } : {}), type: 'unknown', decorators: [{ name: responseDecorator, arguments: [] }] });

  const properties: ts.ObjectLiteralElementLike[] = [];
  const property = (name: string, value: string | ts.Expression) =>
    properties.push(typeof value === 'string' && value === name ? f.createShorthandPropertyAssignment(name) : f.createPropertyAssignment(name, typeof value === 'string' ? f.createIdentifier(value) : value));
  if (caller) property('caller', caller);
  if (key) property('key', key);
  property('body', body);
  const routeParams = namedValues(sf, again.getParameters(), 'Param', 'Params');
  if (routeParams) property('params', routeParams);
  const query = namedValues(sf, again.getParameters(), 'QueryParam', 'QueryParams');
  if (query) property('query', query);
  property('response', response);
  const call = `${RUN}(${print(f.createStringLiteral(target.codeName, context.style.quote === 'single'))}, ${print(f.createObjectLiteralExpression(properties, false))}, async () =>`;
  const methodName = again.getName();
  if (!wrapBody(sf, again, call)) return refuse('it has no body');
  const parts = [keyed ? `keyed by the ${header} header (@HeaderParam)` : 'keyed by its fields', ...(scoped ? ['scoped to @CurrentUser()'] : []), 'its @Body() fingerprinted', 'replay and Retry-After headers set on @Res()'];
  const edits = [{ action: target.action, file: target.file, summary: `runs ${methodName} inside ${RUN}('${target.codeName}', …), ${parts.join(', ')}` }];
  const manual = [...clientKeyStep(target)];
  if (addCaller) {
    manual.push({ action: target.action, file: target.file, line, reason: `apply added a @CurrentUser() parameter: keys are scoped to what your currentUserChecker returns (its id property, or the value itself when it is a string or number); a request without a caller is answered 401` });
  }
  return { edits, manual };
}

/**
 * `<scaffold>/controllerClaim.ts`: what the wired routing-controllers methods call, written once and then the user's.
 * routing-controllers answers a thrown error with its `httpCode` and, for a JSON controller, the error's toJSON(),
 * so the core's refusals and errors become HttpErrors carrying the scaffold's problem details. Static text: nothing
 * from the config or the code reaches it.
 */
export function renderControllerClaim(): string {
  return `import { HttpError } from 'routing-controllers';
import { InFlightError, MismatchError, NotReplayableError } from './core.js';
import { identifyRequest } from './identify.js';
import { failureProblem, problemFor, type Problem } from './problems.js';
import { ACTIONS, POLICY, type ActionName } from './settings.js';
import { LeaseLostError, OutcomeUnknownError, StoreUnavailableError, type IdempotencyContext } from './types.js';
import { idempotency } from './instance.js';

// Written once by \`idempotency-builder apply\`; yours to edit. The routing-controllers methods apply wired claim their
// key here, inside the method: routing-controllers runs @UseBefore middleware before its body parser and
// authorizationChecker, so a middleware would see neither the body nor the caller.

/**
 * A refusal or failure of the claim, answered the routing-controllers way: its error handler sets the status from
 * \`httpCode\` and sends toJSON() (the problem details, the retry seconds among them). The Retry-After header is set
 * on the method's @Res() before this is thrown: the error handler keeps headers already set.
 */
export class IdempotencyHttpError extends HttpError {
  constructor(readonly problem: Problem) {
    super(problem.status, problem.title);
    Object.setPrototypeOf(this, IdempotencyHttpError.prototype);
    this.name = 'IdempotencyHttpError';
  }

  toJSON() {
    const { type, title, status, detail, retryAfterSeconds } = this.problem;
    return retryAfterSeconds === undefined
      ? { type, title, status, detail }
      : { type, title, status, detail, retryAfterSeconds };
  }
}

/** What the wired method passes: its @CurrentUser(), @HeaderParam(key header), @Body(), @Param(), @QueryParam() and @Res() values. */
export interface ControllerCall {
  /** The caller: its \`id\`, or the value itself when it is a string or number. Unused for global actions. */
  readonly caller?: unknown;
  readonly key?: string | undefined;
  readonly body?: unknown;
  readonly params?: unknown;
  readonly query?: unknown;
  /** @Res(): Express's response, or Koa's ctx.response under the Koa driver; headers are set on it. */
  readonly response?: unknown;
}

/**
 * Sets a header on what @Res() injects, without importing either driver: Express's response and Koa's ctx.response
 * both have set(name, value); a bare Node response has setHeader. routing-controllers still sends the method's result
 * (or its error) through the same response, so the header goes out with it.
 */
function setHeader(response: unknown, name: string, value: string): void {
  if (response === null || typeof response !== 'object') return;
  const target = response as { set?: unknown; setHeader?: unknown; headersSent?: unknown; headerSent?: unknown };
  if (target.headersSent === true || target.headerSent === true) return;
  const set = typeof target.set === 'function' ? target.set : target.setHeader;
  if (typeof set === 'function') (set as (name: string, value: string) => unknown).call(response, name, value);
}

/** The error answering \`problem\`, its Retry-After set first when a retry can succeed (a duplicate in flight, 503). */
function refusal(problem: Problem, response: unknown): IdempotencyHttpError {
  if (problem.retryAfterSeconds !== undefined)
    setHeader(response, 'retry-after', String(problem.retryAfterSeconds));
  return new IdempotencyHttpError(problem);
}

function principalOf(caller: unknown): string | number | undefined {
  if (typeof caller === 'string' || typeof caller === 'number') return caller;
  if (caller !== null && typeof caller === 'object') {
    const id = (caller as { id?: unknown }).id;
    if (typeof id === 'string' || typeof id === 'number') return id;
  }
  return undefined;
}

function problemOf(error: unknown): Problem | undefined {
  if (error instanceof InFlightError) return problemFor('in-flight', POLICY, error.retryAfterSeconds);
  if (error instanceof MismatchError) return problemFor('key-mismatch', POLICY);
  if (error instanceof NotReplayableError) return problemFor('response-not-replayable', POLICY);
  if (
    error instanceof StoreUnavailableError ||
    error instanceof LeaseLostError ||
    error instanceof OutcomeUnknownError
  )
    return failureProblem(error, POLICY);
  return undefined;
}

/**
 * Runs \`work\` at most once per (caller, key) for the action and returns the JSON form of its result; a repeat gets
 * the stored JSON, so routing-controllers answers it with the same status and body, plus the replay header
 * (Idempotent-Replayed: true). A missing or malformed key is answered 400, no caller 401, a repeat while the first
 * runs 409 with Retry-After, other input under the same key 422 (or the configured status), a store outage 503 with
 * Retry-After. A thrown \`work\` releases the key, so a retry runs again.
 */
export async function runOnceInController<T>(
  name: ActionName,
  call: ControllerCall,
  work: (context: IdempotencyContext) => Promise<T>,
): Promise<T> {
  const action = ACTIONS[name];
  const identified = identifyRequest(action, POLICY, {
    method: action.method ?? 'POST',
    keyHeader: call.key,
    params: call.params ?? {},
    body: call.body,
    query: call.query ?? {},
    principal: () => principalOf(call.caller),
  });
  // 'pass' is another method than the action's, which a call naming the action never is.
  if (identified.kind !== 'check')
    throw refusal(
      identified.kind === 'refuse' ? identified.problem : problemFor('key-missing', POLICY),
      call.response,
    );
  try {
    const { result, replayed } = await idempotency.core.runOnce(action, identified.request, async (_signal, context) => {
      const value = await work(context);
      return (value === undefined ? value : JSON.parse(JSON.stringify(value))) as T;
    });
    if (replayed) setHeader(call.response, POLICY.replayHeader, 'true');
    return result;
  } catch (error) {
    const problem = problemOf(error);
    throw problem ? refusal(problem, call.response) : error;
  }
}
`;
}
