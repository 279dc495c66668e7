import { Node, SyntaxKind, type CallExpression, type Expression, type ObjectLiteralExpression, type SourceFile } from 'ts-morph';
import type { WiringTarget } from './types.js';

/** Parentheses, `as` / `satisfies` / `!` around an expression: `createRoute({ … }) as const` is still the config. */
export function unwrapExpression(node: Node): Node {
  let current = node;
  while (Node.isParenthesizedExpression(current) || Node.isAsExpression(current) || Node.isSatisfiesExpression(current) || Node.isNonNullExpression(current)) current = current.getExpression();
  return current;
}

/** `x.openapi(config, handler, hook?)` registrations of @hono/zod-openapi in the file, in source order. */
export function openApiCalls(sf: SourceFile): CallExpression[] {
  return sf.getDescendantsOfKind(SyntaxKind.CallExpression).filter((call) => {
    const callee = call.getExpression();
    return Node.isPropertyAccessExpression(callee) && callee.getName() === 'openapi' && call.getArguments().length >= 2;
  });
}

/** The config object of `createRoute({ … })` or of a bare `{ … }` (the route argument, or a binding's initializer). */
export function configObject(node: Node | undefined): ObjectLiteralExpression | undefined {
  if (!node) return undefined;
  let current = unwrapExpression(node);
  if (Node.isCallExpression(current)) {
    const callee = current.getExpression();
    const [first] = current.getArguments();
    if (!Node.isIdentifier(callee) || callee.getText() !== 'createRoute' || !first) return undefined;
    current = unwrapExpression(first);
  }
  return Node.isObjectLiteralExpression(current) ? current : undefined;
}

const literal = (node: Node | undefined): string | undefined => {
  const value = node && Node.isPropertyAssignment(node) ? node.getInitializer() : undefined;
  const bare = value ? unwrapExpression(value) : undefined;
  return bare && (Node.isStringLiteral(bare) || Node.isNoSubstitutionTemplateLiteral(bare)) ? bare.getLiteralValue() : undefined;
};

/**
 * The upper-case method and Hono-style path (`/notes/:id` for OpenAPI's `/notes/{id}`) a config registers, each
 * undefined when it is not a literal of the object itself (`{ ...base, path: '/notes' }`).
 */
export function configRoute(object: ObjectLiteralExpression): { method?: string; path?: string } {
  const method = literal(object.getProperty('method'));
  const path = literal(object.getProperty('path'));
  return { ...(method ? { method: method.toUpperCase() } : {}), ...(path ? { path: path.replace(/\{([^{}/]+)\}/g, ':$1') } : {}) };
}

/** The config object a route argument names inside its own file: inline, or a top-level `const x = createRoute({ … })`. */
export function configInFile(sf: SourceFile, argument: Expression): ObjectLiteralExpression | undefined {
  const inline = configObject(argument);
  if (inline) return inline;
  const bare = unwrapExpression(argument);
  if (!Node.isIdentifier(bare)) return undefined;
  const declaration = sf.getVariableDeclaration(bare.getText());
  return declaration ? configObject(declaration.getInitializer()) : undefined;
}

/**
 * The `.openapi(…)` registration the target points at: the one whose `openapi` name sits on the recorded line (unless
 * its config visibly registers another route), or, when the line is not binding (the file is what the last apply
 * wrote, an import added above it), the only one whose config registers the target's method and path. `configOf` finds a call's config (by default only inside the file;
 * the project pass follows imports).
 */
export function locateOpenApi(sf: SourceFile, target: WiringTarget, anyLine: boolean, samePath: (registered: string, full: string) => boolean, configOf: (call: CallExpression) => ObjectLiteralExpression | undefined = (call) => configInFile(sf, call.getArguments()[0] as Expression)): CallExpression | undefined {
  const calls = openApiCalls(sf);
  const method = (target.method ?? 'POST').toUpperCase();
  // Whether the call's config registers the target's route: yes, no, or unknown (a config this resolver cannot see).
  const fits = (call: CallExpression): boolean | undefined => {
    const object = configOf(call);
    const route = object ? configRoute(object) : {};
    if (route.method === undefined && route.path === undefined) return undefined;
    return (route.method === undefined || route.method === method) && (route.path === undefined || (target.path !== undefined && samePath(route.path, target.path)));
  };
  // The callee `x.openapi` ends with its name: the line the inspection recorded.
  const here = calls.find((call) => call.getExpression().getEndLineNumber() === target.line);
  // In a file apply wrote itself, the lines it added above (imports, a config's middleware) moved the registrations
  // down: the route decides, and among registrations of the same config the first at or below the recorded line.
  const matching = anyLine ? calls.filter((call) => fits(call) === true) : [];
  if (matching.length === 1) return matching[0];
  const below = matching.find((call) => call.getExpression().getEndLineNumber() >= target.line);
  if (below) return below;
  if (!here || fits(here) === false) return undefined;
  return here;
}
