import { Node, SyntaxKind, type Decorator, type MethodDeclaration, type SourceFile } from 'ts-morph';
import { REQUEST_PARTS } from '../nestAuthentication.js';
import { ensureNamedImport } from '../sourceFile.js';
import type { WiringTarget } from '../types.js';
import { clientKeyStep, manualOnly, type Transform, type TransformContext, type TransformOutcome } from './context.js';
import { keyHandlerCalls } from './stripeKey.js';
import { webhookManual } from './webhookManual.js';

export const VERBS: Record<string, string> = { POST: 'Post', PUT: 'Put', PATCH: 'Patch', DELETE: 'Delete', ALL: 'All' };

const literalArg = (node: Node | undefined) => (node && (Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node)) ? node.getLiteralValue() : undefined);

/** Controller prefix + method path, `@Controller('payments')` + `@Post(':id/refund')` → `/payments/:id/refund`. */
export function routeOf(method: MethodDeclaration, verb: string): string | undefined {
  const decorator = method.getDecorator(verb);
  const own = decorator?.getArguments()[0];
  const ownPath = own === undefined ? '' : literalArg(own);
  const controller = method.getParentIfKind(SyntaxKind.ClassDeclaration)?.getDecorator('Controller');
  // The project's own controller decorator (`@PaymentController('stripe')`): the prefix is the inspector's to know,
  // so the method's own path is matched as the end of the route.
  if (!controller) return ownPath ? `/${ownPath.replace(/^\/+|\/+$/g, '')}` : undefined;
  const prefixArg = controller?.getArguments()[0];
  const prefix = prefixArg === undefined ? '' : literalArg(prefixArg);
  if (ownPath === undefined || prefix === undefined) return undefined;
  return `/${[prefix, ownPath].map((p) => p.replace(/^\/+|\/+$/g, '')).filter(Boolean).join('/')}`;
}

/** A global prefix (`app.setGlobalPrefix('api')`) or a router module sits in front of what the decorators say. */
function routeMatches(declared: string | undefined, full: string | undefined): boolean {
  if (declared === undefined || full === undefined) return true;
  const wanted = full.replace(/\/+$/, '') || '/';
  return wanted === declared || (declared !== '/' && wanted.endsWith(declared));
}

export const hasMark = (method: MethodDeclaration, codeName: string) =>
  method.getDecorators().some((d) => d.getName() === 'Idempotent' && d.getArguments()[0]?.getText() === `ACTIONS.${codeName}`);

/** The `@Mutation()` decorator of a resolver method, when it comes from @nestjs/graphql (imported under any name). */
export function nestMutationDecorator(method: MethodDeclaration): Decorator | undefined {
  const sf = method.getSourceFile();
  const imported = new Set(
    sf
      .getImportDeclarations()
      .filter((declaration) => declaration.getModuleSpecifierValue() === '@nestjs/graphql')
      .flatMap((declaration) => declaration.getNamedImports().filter((named) => named.getName() === 'Mutation').map((named) => (named.getAliasNode() ?? named.getNameNode()).getText())),
  );
  return imported.size === 0 ? undefined : method.getDecorators().find((d) => imported.has(d.getName()));
}

/**
 * The GraphQL field names a NestJS mutation answers to: `@Mutation(() => Pet, { name: 'addPet' })`, schema-first
 * `@Mutation('addPet')`, else the method's own name. The inspection records it as the path `/addPet`.
 */
function mutationNames(method: MethodDeclaration, decorator: Decorator): string[] {
  const names = [method.getName()];
  for (const arg of decorator.getArguments()) {
    const literal = literalArg(arg);
    if (literal !== undefined) names.push(literal);
    if (!Node.isObjectLiteralExpression(arg)) continue;
    const name = arg.getProperty('name');
    const value = name && Node.isPropertyAssignment(name) ? literalArg(name.getInitializer()) : undefined;
    if (value !== undefined) names.push(value);
  }
  return names;
}

/** The verb's routes matching the target's path; for a GraphQL mutation (path `/name`), the resolver methods of that name. */
function candidates(sf: SourceFile, target: WiringTarget, verb: string): MethodDeclaration[] {
  const methods = sf.getDescendantsOfKind(SyntaxKind.MethodDeclaration);
  const routes = methods.filter((m) => m.getDecorator(verb) && routeMatches(routeOf(m, verb), target.path));
  if (routes.length > 0) return routes;
  return methods.filter((m) => {
    const mutation = nestMutationDecorator(m);
    return mutation !== undefined && target.path !== undefined && mutationNames(m, mutation).includes(target.path.replace(/^\/+/, ''));
  });
}

/** The handler for the target's verb and path whose lines span the recorded line (or the `occurrence`-th one). */
export function locateNestMethod(sf: SourceFile, target: WiringTarget, anyLine: boolean): { method: MethodDeclaration; occurrence: number } | undefined {
  const verb = VERBS[target.method ?? 'POST'];
  if (!verb) return undefined;
  const methods = candidates(sf, target, verb);
  // Already marked for this action (a second apply): that is the one, wherever the edits moved it.
  const marked = methods.findIndex((m) => hasMark(m, target.codeName));
  if (marked >= 0) return { method: methods[marked]!, occurrence: marked };
  if (target.occurrence !== undefined && methods[target.occurrence]) return { method: methods[target.occurrence]!, occurrence: target.occurrence };
  const spans = (m: MethodDeclaration) => m.getStartLineNumber() <= target.line && target.line <= m.getEndLineNumber();
  const method = methods.find(spans) ?? (methods.length === 1 && (anyLine || hasMark(methods[0]!, target.codeName)) ? methods[0] : undefined);
  return method ? { method, occurrence: methods.indexOf(method) } : undefined;
}

/**
 * NestJS: `@Idempotent(ACTIONS.name)` right under the route's verb decorator, or under a resolver's `@Mutation()`
 * (the interceptor runs for GraphQL resolvers too); the module registers the interceptor.
 */
export const wireNestRoute: Transform = (sf, target, context) => {
  const verb = VERBS[target.method ?? 'POST'];
  if (!verb) return manualOnly(target, `no NestJS verb decorator for ${target.method ?? ''}`);
  const located = locateNestMethod(sf, target, context.anyLine);
  const method = located?.method;
  if (!method) {
    return { edits: [], manual: [], stale: `${target.file} changed since inspection: no @${verb}() handler for ${target.method ?? 'POST'} ${target.path ?? ''} at line ${target.line}` };
  }
  if (target.trigger === 'webhook') return webhookManual(target, method.getStartLineNumber());
  const out: TransformOutcome = { edits: [], manual: [] };
  const mutation = nestMutationDecorator(method);
  if (!hasMark(method, target.codeName)) {
    const index = method.getDecorators().findIndex((d) => d === mutation || d.getName() === verb);
    if (!ensureNamedImport(sf, context.style.specifier('index'), 'Idempotent') || !ensureNamedImport(sf, context.style.specifier('index'), 'ACTIONS')) {
      return manualOnly(target, 'the file already binds "Idempotent" or "ACTIONS"; add @Idempotent(ACTIONS.' + target.codeName + ') by hand', method.getStartLineNumber());
    }
    method.insertDecorator(index + 1, { name: 'Idempotent', arguments: [`ACTIONS.${target.codeName}`] });
    out.edits.push({ action: target.action, file: target.file, summary: `marks ${method.getName()}() with @Idempotent(ACTIONS.${target.codeName})` });
  }
  out.manual.push(...clientKeyStep(target));
  const caller = target.scope === 'global' ? undefined : callerPath(method);
  if (caller) out.principal = caller;
  // Provider calls are keyed from the claim: idempotencyOf(request) when the method takes @Req(), as in every adapter;
  // otherwise idempotencyOf(), the claim the interceptor runs the method under.
  const request = requestParameter(method);
  const keyed = keyHandlerCalls(sf, method, target, context, request ? `idempotencyOf(${request})` : 'idempotencyOf()');
  out.edits.push(...keyed.edits);
  out.manual.push(...keyed.manual);
  return out;
};

/** A project decorator named for the caller: `@ActiveUser()`, `@CurrentUser()`, `@GetUser()`, `@AuthUser()`. */
const CALLER_DECORATOR = /user|account|member|principal|caller/i;
const CALLER_ID = /^(id|userId|sub|accountId|tenantId|uid)$/;

/**
 * How the method reads its caller's id through a parameter decorator of the project's own: `@ActiveUser('userId')
 * userId` is `user.userId`, `@CurrentUser() user` then `user.id` in the body is `user.id`. Such decorators (Nest's
 * createParamDecorator recipe) hand over `request.user`, or its field the argument names; planApply keeps the path
 * only when the project does set `request.user`.
 */
export function callerPath(method: MethodDeclaration): string[] | undefined {
  for (const parameter of method.getParameters()) {
    const decorator = parameter.getDecorators().find((d) => !REQUEST_PARTS.has(d.getName()) && CALLER_DECORATOR.test(d.getName()));
    if (!decorator) continue;
    const args = decorator.getArguments();
    if (args.length > 0) {
      const field = literalArg(args[0]);
      return field !== undefined && CALLER_ID.test(field) ? ['user', field] : undefined;
    }
    const name = parameter.getNameNode();
    if (!Node.isIdentifier(name)) continue;
    const read = method
      .getBody()
      ?.getDescendantsOfKind(SyntaxKind.PropertyAccessExpression)
      .find((access) => access.getExpression().getText() === name.getText() && CALLER_ID.test(access.getName()));
    if (read) return ['user', read.getName()];
  }
  return undefined;
}

/** The name of the method's `@Req()` / `@Request()` parameter (a resolver's `@Context('req')`), if it has one. */
export function requestParameter(method: MethodDeclaration): string | undefined {
  const isRequest = (d: Decorator) => d.getName() === 'Req' || d.getName() === 'Request' || (d.getName() === 'Context' && literalArg(d.getArguments()[0]) === 'req');
  const parameter = method.getParameters().find((p) => p.getDecorators().some(isRequest));
  const name = parameter?.getNameNode();
  return name && Node.isIdentifier(name) ? name.getText() : undefined;
}

/**
 * The root module (the one NestFactory.create() boots) registers `...idempotencyProviders(idempotency)` once: a global
 * interceptor that routes marked handlers through their action's interceptor. Registered in several modules it
 * would run once per registration and claim the same key twice. Returns no edit when it is already there.
 */
export function wireNestModule(sf: SourceFile, moduleClass: string, action: string, file: string, context: TransformContext): TransformOutcome {
  for (const cls of sf.getClasses()) {
    if (cls.getName() !== moduleClass) continue;
    const options = cls.getDecorator('Module')?.getArguments()[0];
    if (!options || !Node.isObjectLiteralExpression(options)) continue;
    const providers = options.getProperty('providers');
    const spread = 'idempotencyProviders(idempotency)';
    const line = cls.getStartLineNumber();
    const moduleName = cls.getName() ?? 'the module';
    if (providers && !Node.isPropertyAssignment(providers)) return { edits: [], manual: [{ action, file, line, reason: `add ...${spread} to the module's providers by hand` }] };
    const array = providers?.getInitializer();
    if (array && !Node.isArrayLiteralExpression(array)) return { edits: [], manual: [{ action, file, line, reason: `the module's providers are an expression; add ...${spread} to them by hand` }] };
    if (array?.getElements().some((e) => e.getText() === `...${spread}`)) return { edits: [], manual: [] };
    if (!ensureNamedImport(sf, context.style.specifier('index'), 'idempotencyProviders') || !ensureNamedImport(sf, context.style.specifier('instance'), 'idempotency')) {
      return { edits: [], manual: [{ action, file, line, reason: `the file already binds "idempotency" or "idempotencyProviders"; add ...${spread} to the providers by hand` }] };
    }
    if (array) array.addElement(`...${spread}`);
    else {
      // Keep the object's trailing-comma habit: `controllers: [X],` then `providers: [...],`.
      const trailingComma = /,\s*}$/.test(options.getText()) && options.getStartLineNumber() !== options.getEndLineNumber();
      const added = options.addPropertyAssignment({ name: 'providers', initializer: `[...${spread}]` });
      // insertText forgets every wrapped node of the file: nothing below may touch one.
      if (trailingComma) sf.insertText(added.getEnd(), ',');
    }
    return { edits: [{ action, file, summary: `registers the idempotency interceptor in ${moduleName} (providers)` }], manual: [] };
  }
  return { edits: [], manual: [] };
}
