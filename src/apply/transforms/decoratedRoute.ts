import { Node, type SourceFile } from 'ts-morph';
import { manualOnly, type Transform } from './context.js';

/**
 * Why a decorator-routed controller (routing-controllers, on Express or Koa) cannot take the generated middleware,
 * and what to do instead. routing-controllers mounts `@UseBefore` middleware ahead of its own body parser and
 * authorizationChecker (its ExpressDriver registers `route, guard, ...before, ...defaults, handler`), so the
 * middleware would see neither the body it fingerprints nor the caller it scopes keys to.
 */
const LIBRARIES: Record<string, (codeName: string) => string> = {
  'routing-controllers': (codeName) =>
    `routing-controllers runs @UseBefore middleware before its body parser and authorizationChecker, so idempotency.${codeName} would see neither the body it fingerprints nor the caller its keys are scoped to. Claim the key inside the method instead: take the header with @HeaderParam('Idempotency-Key', { required: true }) and the caller with @CurrentUser(), then return (await idempotency.core.runOnce(ACTIONS.${codeName}, { scope, key, fingerprint: computeFingerprint({ method, route, fields: pickFields(ACTIONS.${codeName}.significantFields, { body }) }) }, async () => …)).result (all from the scaffold's index), and answer its InFlightError with 409, MismatchError with 422 and StoreUnavailableError with 503 (routing-controllers HttpError)`,
};

/** The decorator-routing library a class method at `line` is routed by (its first decorator's import), if any. */
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
        if (library && LIBRARIES[library]) return library;
      }
    }
  }
  return undefined;
}

/**
 * In front of a framework's route transform: a handler routed by decorators apply does not wire gets a manual step
 * saying why (instead of looking like a route that moved since inspection).
 */
export function unlessDecoratedRoute(route: Transform): Transform {
  return (sf, target, context) => {
    const library = decoratedRouteLibrary(sf, target.line);
    return library ? manualOnly(target, LIBRARIES[library]!(target.codeName)) : route(sf, target, context);
  };
}
