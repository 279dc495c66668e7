import { Node, SyntaxKind, type CallExpression, type Identifier, type ObjectLiteralExpression, type SourceFile } from 'ts-morph';
import { followDeclaration, insideProject, namePath, usesOf } from './followHandler.js';
import { configObject, openApiCalls, unwrapExpression } from './openApiConfig.js';

/** Where the config object is, found again by name in the file's current text (earlier edits move things). */
export type ConfigPlace = { file: string; kind: 'inline'; index: number } | { file: string; kind: 'variable'; names: string[] } | { file: string; kind: 'default' };

/** Only a plain dotted name from the code reaches a message. */
export const nameOf = (node: Node) => {
  const text = unwrapExpression(node).getText();
  return /^[\w$.]{1,80}$/.test(text) ? text : 'its route config';
};

/** `create` or the `create` of `routes.create`: the name a registration passes, to follow to its declaration. */
export function referenceOf(node: Node): Identifier | undefined {
  const bare = unwrapExpression(node);
  return Node.isIdentifier(bare) ? bare : Node.isPropertyAccessExpression(bare) ? bare.getNameNode() : undefined;
}

/** The value a followed declaration binds: `const x = …`'s initializer, `export default …`'s expression. */
const valueOf = (definition: Node) => (Node.isVariableDeclaration(definition) ? definition.getInitializer() : Node.isExportAssignment(definition) ? definition.getExpression() : undefined);

/** The config object the registration's first argument names, where it is declared, and whether no other code uses it. */
export function resolveConfig(root: string, rel: string, sf: SourceFile, call: CallExpression): { place: ConfigPlace; label: string; namesList: boolean } | { why: string } {
  const argument = call.getArguments()[0]!;
  const inline = configObject(argument);
  if (inline) return { place: { file: rel, kind: 'inline', index: openApiCalls(sf).indexOf(call) }, label: 'inline in the call', namesList: middlewareNamesList(root, inline) };
  const reference = referenceOf(argument);
  if (!reference) return { why: 'its route config is built by an expression apply does not follow' };
  const label = nameOf(argument);
  const followed = followDeclaration(root, reference);
  if (followed.kind === 'outside') return { why: `its route config ${label} is declared outside the project (a dependency, or a link out of it); apply edits only your own files` };
  if (followed.kind === 'too-far') return { why: `its route config ${label} is reached through more imports and re-exports than apply follows` };
  if (followed.kind !== 'declaration') return { why: `apply cannot follow its route config ${label} to one declaration` };
  const { definition, links, file } = followed;
  const object = configObject(valueOf(definition));
  if (!object) return { why: `its route config ${label} is not a createRoute({ … }) or object literal apply can edit (built by a function, or re-assigned)` };
  // Type-only uses (`RouteHandler<typeof routes.create>`) change nothing at run time; any other use would run the middleware too.
  const uses = usesOf(definition, links);
  if (!uses) return { why: `apply cannot tell what else uses its route config ${label}` };
  const others = uses.filter((node) => !(node.getSourceFile() === sf && node.getStart() === reference.getStart()) && !node.getFirstAncestor((a) => Node.isTypeNode(a)));
  if (others.length > 0) {
    const registrations = others.filter((node) => isOpenApiArgument(node)).length;
    const where = others.map((node) => `${insideProject(root, node.getSourceFile().getFilePath()) ?? node.getSourceFile().getBaseName()}:${node.getStartLineNumber()}`).join(', ');
    const what = registrations > 0 ? `also registered by ${registrations === 1 ? 'another .openapi(…) call' : `${registrations} other .openapi(…) calls`}` : 'also used by other code';
    return { why: `its route config ${label} is ${what} (${where}), where the middleware would run (or be documented) too: give this registration its own createRoute config` };
  }
  const place: ConfigPlace = Node.isExportAssignment(definition) ? { file, kind: 'default' } : { file, kind: 'variable', names: namePath(definition) };
  return { place, label, namesList: middlewareNamesList(root, object) };
}

/** The config object a registration's first argument leads to, inline or followed to its declaration (no checks of its other uses). */
export function followedConfig(root: string, call: CallExpression): ObjectLiteralExpression | undefined {
  const argument = call.getArguments()[0];
  const inline = configObject(argument);
  if (inline || !argument) return inline;
  const reference = referenceOf(argument);
  const followed = reference ? followDeclaration(root, reference) : undefined;
  return followed?.kind === 'declaration' ? configObject(valueOf(followed.definition)) : undefined;
}

/** A reference that is the first argument of an `x.openapi(…)` call (`routes.create` or `create`). */
function isOpenApiArgument(node: Node): boolean {
  const parent = node.getParent();
  const argument = parent && Node.isPropertyAccessExpression(parent) && parent.getNameNode() === node ? parent : node;
  const call = argument.getParent();
  const callee = call && Node.isCallExpression(call) ? call.getExpression() : undefined;
  return !!callee && Node.isPropertyAccessExpression(callee) && callee.getName() === 'openapi' && (call as CallExpression).getArguments()[0] === argument;
}

/** `middleware: common` where `common` is declared in the project as a list: wrapping it would nest one list in another. */
function middlewareNamesList(root: string, object: ObjectLiteralExpression): boolean {
  const property = object.getProperty('middleware');
  const reference = property && Node.isPropertyAssignment(property) ? referenceOf(property.getInitializerOrThrow()) : undefined;
  if (!reference) return false;
  const followed = followDeclaration(root, reference);
  if (followed.kind !== 'declaration') return false;
  const value = valueOf(followed.definition);
  return value !== undefined && Node.isArrayLiteralExpression(unwrapExpression(value));
}

export function findConfig(sf: SourceFile, place: ConfigPlace): ObjectLiteralExpression | undefined {
  if (place.kind === 'inline') return configObject(openApiCalls(sf)[place.index]?.getArguments()[0]);
  if (place.kind === 'default') return configObject(sf.getExportAssignment((e) => !e.isExportEquals())?.getExpression());
  const matches = sf.getDescendantsOfKind(SyntaxKind.VariableDeclaration).filter((d) => namePath(d).join('\0') === place.names.join('\0'));
  return matches.length === 1 ? configObject(matches[0]!.getInitializer()) : undefined;
}
