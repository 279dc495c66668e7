import { Node, ts, type OptionalKind, type ParameterDeclaration, type ParameterDeclarationStructure } from 'ts-morph';
import type { ManualStep, WiringTarget } from '../types.js';
import type { TransformContext } from './context.js';

/** A resolver apply wraps: a resolver map's property function, or a TypeGraphQL `@Mutation()` method. */
type Resolver = Node & { getParameters(): ParameterDeclaration[] };

/** How one resolver's call to the plain wrapper is keyed and fingerprinted, or why apply leaves it. */
export type GraphqlCall =
  | {
      /** The key expression, printed: `context.request.headers.get('idempotency-key') ?? undefined`. */
      key: string;
      /** The fingerprint input: the resolver's `args`, or `{ sku, quantity }` from TypeGraphQL's `@Arg()` parameters. */
      input: string;
      header: string;
      /** The context parameter to add (the resolver took none). */
      addParameter?: OptionalKind<ParameterDeclarationStructure>;
      steps: ManualStep[];
    }
  | { manual: string };

/** Where a server's context holds the request, how its header is read there, and what an added parameter is typed as. */
interface RequestAccess {
  /** The context's property holding the request: yoga's `request`, or what the Apollo context function returns it as. */
  property: string;
  /** The key read, printed: `<context>.<property>.headers…`. */
  key(context: string, header: string): string;
  /** Only what the key read needs, so no import and no DOM lib. */
  type: string;
  /** A type the context parameter is annotated with that apply knows holds the request. */
  known?: RegExp;
  /** Steps the server's own behaviour adds (yoga's error masking). */
  steps: (target: WiringTarget, resolver: Resolver) => ManualStep[];
}

function accessFor(graphql: TransformContext['graphql']): RequestAccess | undefined {
  if (graphql?.server === 'graphql-yoga') {
    return { property: 'request', key: yogaKey, type: '{ request: { headers: { get(name: string): string | null } } }', known: /\bYogaInitialContext\b/, steps: (target, resolver) => [masking(target, resolver)] };
  }
  const property = graphql?.requestProperty;
  if (graphql?.server?.includes('apollo') && property !== undefined && /^[A-Za-z_$][\w$]*$/.test(property)) {
    return { property, key: (context, header) => nodeKey(context, property, header), type: `{ ${property}: { headers: Record<string, string | string[] | undefined> } }`, steps: () => [] };
  }
  return undefined;
}

/**
 * `<context>.<property>.headers['<header>']?.toString()`: Node joins a repeated header with ", " (an array only for
 * the few it keeps apart), and either way the comma fails the key grammar, so a repeated key is refused, not merged.
 */
function nodeKey(context: string, property: string, header: string): string {
  const f = ts.factory;
  const headers = f.createPropertyAccessExpression(f.createPropertyAccessExpression(f.createIdentifier(context), property), 'headers');
  const value = f.createElementAccessExpression(headers, f.createStringLiteral(header.toLowerCase(), true));
  return print(f.createCallChain(f.createPropertyAccessChain(value, f.createToken(ts.SyntaxKind.QuestionDotToken), 'toString'), undefined, undefined, []));
}

/** Whether the parameter's declared type visibly has `property`: a type literal, or an interface / type of its file. */
function declares(param: ParameterDeclaration, property: string, known?: RegExp): boolean {
  const type = param.getTypeNode();
  if (!type) return true;
  if (known?.test(type.getText())) return true;
  const members = (node: Node | undefined): string[] => (node && (Node.isTypeLiteral(node) || Node.isInterfaceDeclaration(node)) ? node.getMembers().flatMap((m) => (Node.isPropertySignature(m) ? [m.getName()] : [])) : []);
  if (Node.isTypeLiteral(type)) return members(type).includes(property);
  if (!Node.isTypeReference(type)) return false;
  const name = type.getTypeName().getText();
  const sf = param.getSourceFile();
  return members(sf.getInterface(name)).includes(property) || members(sf.getTypeAlias(name)?.getTypeNode()).includes(property);
}

/**
 * yoga answers every error that is not a GraphQLError as "Unexpected error.": the wrapper's errors that the caller
 * must act on would read as a server fault.
 */
const YOGA_MASKING =
  'graphql-yoga masks every error that is not a GraphQLError as "Unexpected error.", so a key reused with other arguments (MismatchError), a duplicate while the first still runs (InFlightError: retry later) and a missing or malformed key (InvalidKeyError) reach the caller so, unless the maskedErrors option of your createYoga() lets them through (e.g. as a GraphQLError with the error\'s name as extensions.code)';

const print = (node: ts.Node) => ts.createPrinter().printNode(ts.EmitHint.Expression, node, ts.createSourceFile('x.ts', '', ts.ScriptTarget.ES2022));

/** `<context>.request.headers.get('<header>') ?? undefined`, printed by the TS factory (the header comes from the config). */
function yogaKey(context: string, header: string): string {
  const f = ts.factory;
  const headers = f.createPropertyAccessExpression(f.createPropertyAccessExpression(f.createIdentifier(context), 'request'), 'headers');
  const get = f.createCallExpression(f.createPropertyAccessExpression(headers, 'get'), undefined, [f.createStringLiteral(header.toLowerCase(), true)]);
  return print(f.createBinaryExpression(get, ts.SyntaxKind.QuestionQuestionToken, f.createIdentifier('undefined')));
}

const identifierName = (p: ParameterDeclaration | undefined) => (p && Node.isIdentifier(p.getNameNode()) && !p.isRestParameter() ? p.getName() : undefined);
const decorator = (p: ParameterDeclaration, name: string) => p.getDecorators().find((d) => d.getName() === name);

/** `{ sku, quantity: qty }` for TypeGraphQL's `@Arg('sku') sku, @Arg('quantity') qty`, or the one `@Args()` object. */
function decoratedInput(params: readonly ParameterDeclaration[]): string | undefined {
  const args = params.filter((p) => decorator(p, 'Args'));
  if (args.length === 1) return identifierName(args[0]);
  const f = ts.factory;
  const properties: ts.ObjectLiteralElementLike[] = [];
  for (const param of params) {
    const arg = decorator(param, 'Arg')?.getArguments()[0];
    if (!arg) continue;
    const local = identifierName(param);
    if (!local || !Node.isStringLiteral(arg)) return undefined;
    const name = arg.getLiteralValue();
    properties.push(name === local ? f.createShorthandPropertyAssignment(local) : f.createPropertyAssignment(/^[A-Za-z_$][\w$]*$/.test(name) ? f.createIdentifier(name) : f.createStringLiteral(name, true), f.createIdentifier(local)));
  }
  return properties.length > 0 ? print(f.createObjectLiteralExpression(properties, false)) : undefined;
}

const masking = (target: WiringTarget, resolver: Resolver): ManualStep => ({ action: target.action, file: target.file, line: resolver.getStartLineNumber(), reason: YOGA_MASKING });

/** `{ sku, quantity: qty }` for destructured arguments `(_, { sku, quantity: qty }, context)`: what the resolver reads of them. */
function destructuredInput(param: ParameterDeclaration | undefined): string | undefined {
  const pattern = param?.getNameNode();
  if (!pattern || !Node.isObjectBindingPattern(pattern) || pattern.getElements().length === 0) return undefined;
  const f = ts.factory;
  const properties: ts.ObjectLiteralElementLike[] = [];
  for (const element of pattern.getElements()) {
    const local = element.getNameNode();
    const property = element.getPropertyNameNode();
    if (element.getDotDotDotToken() || !Node.isIdentifier(local)) return undefined;
    if (!property) {
      properties.push(f.createShorthandPropertyAssignment(local.getText()));
      continue;
    }
    const name = Node.isIdentifier(property) ? property.getText() : Node.isStringLiteral(property) ? property.getLiteralValue() : undefined;
    if (name === undefined) return undefined;
    properties.push(f.createPropertyAssignment(/^[A-Za-z_$][\w$]*$/.test(name) ? f.createIdentifier(name) : f.createStringLiteral(name, true), f.createIdentifier(local.getText())));
  }
  return print(f.createObjectLiteralExpression(properties, false));
}

/** An unused name for an added context parameter. */
function freeName(resolver: Resolver): string | undefined {
  const used = new Set(resolver.getDescendants().flatMap((d) => (Node.isIdentifier(d) ? [d.getText()] : [])));
  return ['context', 'graphqlContext'].find((name) => !used.has(name));
}

/**
 * The key and input of a GraphQL resolver's call to the plain wrapper. The key is the Idempotency-Key header of the
 * request the server puts in the resolver's context: graphql-yoga's context always holds the Fetch `request`; Apollo
 * Server's holds what the project's context function returns, which planApply read (graphqlContext.ts). Where apply
 * cannot know where the request is (another server, a context function it cannot read, a context type that does not
 * show it), it says which line to adapt instead of guessing.
 */
export function graphqlCall(resolver: Resolver, target: WiringTarget, context: TransformContext): GraphqlCall {
  const header = context.graphql?.header ?? 'Idempotency-Key';
  const params = resolver.getParameters();
  const decorated = Node.isMethodDeclaration(resolver) && Node.isClassDeclaration(resolver.getParent());
  const input = decorated ? decoratedInput(params) : (identifierName(params[1]) ?? destructuredInput(params[1]));
  const snippet = (key: string) => `wrap its body as \`return idempotency.${target.codeName}({ key: ${key}, fingerprintInput: ${input ?? '<its arguments>'} }, async () => …)\` (the wrapper from ${context.style.specifier('instance')})`;
  if (input === undefined) return { manual: `apply cannot tell this resolver's arguments (${decorated ? "TypeGraphQL's @Arg() / @Args() parameters" : 'the second parameter, (parent, args, context)'}): ${snippet(`<the ${header} header>`)}` };
  const server = context.graphql?.server;
  const access = accessFor(context.graphql);
  if (!access) {
    return { manual: `its key is the ${header} header of the request, and apply cannot tell where ${server ?? 'your GraphQL server'}'s context puts the request (it holds what your context function returns): ${snippet(`<the ${header} header, read from the request your context function passes>`)}` };
  }
  const example = access.key('<context>', header);
  const existing = decorated ? params.find((p) => decorator(p, 'Ctx')) : params[2];
  if (existing) {
    const name = identifierName(existing);
    // A context typed as the project's own type that does not visibly hold the request: that line is the user's to adapt.
    if (!name || !declares(existing, access.property, access.known)) {
      return { manual: `its key is the ${header} header of the request ${server} puts in the context as \`${access.property}\`, and this resolver's context parameter is typed as ${existing.getTypeNode()?.getText() ?? 'a pattern'}, which apply cannot tell holds \`${access.property}\`: ${snippet(example)}` };
    }
    return { key: access.key(name, header), input, header, steps: access.steps(target, resolver) };
  }
  if (decorated) return { manual: `its key is the ${header} header of the request in the GraphQL context, and the method takes no @Ctx() parameter: add one and ${snippet(example)}` };
  const name = freeName(resolver);
  if (!name || params.length !== 2) return { manual: `its key is the ${header} header of the request in the GraphQL context, which this resolver does not take: ${snippet(example)}` };
  const typed = /\.(c|m)?tsx?$/.test(resolver.getSourceFile().getFilePath());
  return { key: access.key(name, header), input, header, addParameter: { name, ...(typed ? { type: access.type } : {}) }, steps: access.steps(target, resolver) };
}
