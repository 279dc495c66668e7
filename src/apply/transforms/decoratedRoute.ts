import { Node, SyntaxKind, type SourceFile } from 'ts-morph';
import { manualOnly, type Transform } from './context.js';
import { wireRoutingControllersMethod, wiredInController } from './routingControllersMethod.js';

/**
 * Why a decorator-routed handler cannot take the generated middleware, and what to do instead.
 * - routing-controllers (on Express or Koa) mounts `@UseBefore` middleware ahead of its own body parser and
 *   authorizationChecker (its ExpressDriver registers `route, guard, ...before, ...defaults, handler`), so the
 *   middleware would see neither the body it fingerprints nor the caller it scopes keys to: apply claims the key
 *   inside the method instead (routingControllersMethod.ts).
 * - A GraphQL mutation arrives at the one GraphQL endpoint with every other operation: route middleware cannot tell
 *   it apart. In a NestJS project a @nestjs/graphql resolver is the exception: the Nest interceptor protects it (see
 *   wireNestRoute). TypeGraphQL resolvers and resolver maps elsewhere have no interceptor to mark them for.
 */
const claimInside = (codeName: string, key: string, caller: string, input: string, errors: string) =>
  `Claim the key inside it instead: ${key} and ${caller}, then return (await idempotency.core.runOnce(ACTIONS.${codeName}, { scope, key, fingerprint: computeFingerprint({ method: 'POST', route: ACTIONS.${codeName}.route, fields: pickFields(ACTIONS.${codeName}.significantFields, { body: ${input} }) }) }, async () => …)).result (all from the scaffold's index), and answer its InFlightError, MismatchError and StoreUnavailableError ${errors}`;

const GRAPHQL = (codeName: string, global: boolean) =>
  `a GraphQL mutation arrives at the one GraphQL endpoint with every other operation, so no route middleware can tell it apart. ${claimInside(codeName, "take the key from the request's Idempotency-Key header through your GraphQL context", global ? "the scope 'global' (its keys belong to no caller)" : 'the caller from the context', 'args', 'as GraphQL errors the client retries on (in flight), shows (other input) or retries later (store unavailable)')}`;

/** The libraries whose decorated handlers a route transform does not wire; routing-controllers has its own (below). */
const LIBRARIES: Record<string, ((codeName: string, global: boolean) => string) | null> = {
  'routing-controllers': null,
  '@nestjs/graphql': GRAPHQL,
  'type-graphql': GRAPHQL,
};

/** The library a decorator of the class method at `line` comes from, among those apply leaves manual (LIBRARIES), if any. */
export function decoratedRouteLibrary(sf: SourceFile, line: number): string | undefined {
  for (const cls of sf.getClasses()) {
    for (const method of cls.getMethods()) {
      const decorators = method.getDecorators();
      if (decorators.length === 0) continue;
      const first = Math.min(method.getStartLineNumber(), ...decorators.map((d) => d.getStartLineNumber()));
      const last = method.getNameNode().getStartLineNumber();
      if (line < first || line > last) continue;
      for (const decorator of decorators) {
        const name = decorator.getCallExpression()?.getExpression() ?? decorator.getExpression();
        if (!Node.isIdentifier(name)) continue;
        const library = sf
          .getImportDeclarations()
          .find((declaration) => declaration.getNamedImports().some((named) => (named.getAliasNode() ?? named.getNameNode()).getText() === name.getText()))
          ?.getModuleSpecifierValue();
        if (library && Object.hasOwn(LIBRARIES, library)) return library;
      }
    }
  }
  return undefined;
}

/**
 * In front of a framework's route transform: a routing-controllers method claims its key inside itself
 * (routingControllersMethod.ts); another handler routed by decorators apply does not wire gets a manual step saying
 * why (instead of looking like a route that moved since inspection). `wires` names the libraries the route transform
 * handles itself (NestJS: @nestjs/graphql resolvers, which its interceptor protects).
 */
export function unlessDecoratedRoute(route: Transform, wires: readonly string[] = []): Transform {
  return (sf, target, context) => {
    const library = decoratedRouteLibrary(sf, target.line) ?? (inResolverMap(sf, target.line) ? 'type-graphql' : undefined);
    if (library === 'routing-controllers' || (!library && wiredInController(sf, target.codeName))) return wireRoutingControllersMethod(sf, target, context);
    const manual = library && !wires.includes(library) ? LIBRARIES[library] : undefined;
    return manual ? manualOnly(target, manual(target.codeName, target.scope === 'global')) : route(sf, target, context);
  };
}

/** A function at `line` that is a field of a resolver map's `Mutation: { … }` object. */
function inResolverMap(sf: SourceFile, line: number): boolean {
  return sf.getDescendantsOfKind(SyntaxKind.PropertyAssignment).some((property) => {
    if (property.getName() !== 'Mutation') return false;
    const map = property.getInitializer();
    if (!map || !Node.isObjectLiteralExpression(map)) return false;
    return map.getProperties().some((field) => field.getStartLineNumber() <= line && line <= (Node.isMethodDeclaration(field) ? field.getNameNode().getStartLineNumber() : field.getStartLineNumber()));
  });
}
