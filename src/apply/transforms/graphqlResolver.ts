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

/** The servers whose GraphQL context apply knows the request's place in. */
const REQUEST_IN_CONTEXT: Readonly<Record<string, string>> = { 'graphql-yoga': 'graphql-yoga' };

/** What an added context parameter is typed as: only what the key read needs, so no import and no DOM lib. */
const CONTEXT_TYPE = '{ request: { headers: { get(name: string): string | null } } }';

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

/** An unused name for an added context parameter. */
function freeName(resolver: Resolver): string | undefined {
  const used = new Set(resolver.getDescendants().flatMap((d) => (Node.isIdentifier(d) ? [d.getText()] : [])));
  return ['context', 'graphqlContext'].find((name) => !used.has(name));
}

/**
 * The key and input of a GraphQL resolver's call to the plain wrapper. The key is the Idempotency-Key header of the
 * request the server puts in the resolver's context: graphql-yoga's context always holds the Fetch `request`. For a
 * server whose context holds what the project's own context function returns (Apollo Server, mercurius), apply cannot
 * know where the request is, and says which line to adapt instead of guessing.
 */
export function graphqlCall(resolver: Resolver, target: WiringTarget, context: TransformContext): GraphqlCall {
  const header = context.graphql?.header ?? 'Idempotency-Key';
  const params = resolver.getParameters();
  const decorated = Node.isMethodDeclaration(resolver) && Node.isClassDeclaration(resolver.getParent());
  const input = decorated ? decoratedInput(params) : identifierName(params[1]);
  const snippet = (key: string) => `wrap its body as \`return idempotency.${target.codeName}({ key: ${key}, fingerprintInput: ${input ?? '<its arguments>'} }, async () => …)\` (the wrapper from ${context.style.specifier('instance')})`;
  if (input === undefined) return { manual: `apply cannot tell this resolver's arguments (${decorated ? "TypeGraphQL's @Arg() / @Args() parameters" : 'the second parameter, (parent, args, context)'}): ${snippet(`<the ${header} header>`)}` };
  const server = context.graphql?.server;
  if (server === undefined || REQUEST_IN_CONTEXT[server] === undefined) {
    return { manual: `its key is the ${header} header of the request, and apply cannot tell where ${server ?? 'your GraphQL server'}'s context puts the request (it holds what your context function returns): ${snippet(`<the ${header} header, read from the request your context function passes>`)}` };
  }
  const existing = decorated ? params.find((p) => decorator(p, 'Ctx')) : params[2];
  if (existing) {
    const name = identifierName(existing);
    const type = existing.getTypeNode()?.getText();
    // A context typed as the project's own interface may not declare yoga's `request`: that line is the user's to adapt.
    if (!name || (type !== undefined && !/\bYogaInitialContext\b/.test(type))) {
      return { manual: `its key is the ${header} header of the request graphql-yoga puts in the context, and this resolver's context parameter is typed as ${type ?? 'a pattern'}, which apply cannot tell holds \`request\`: ${snippet(`<context>.request.headers.get('${header.toLowerCase()}') ?? undefined`)}` };
    }
    return { key: yogaKey(name, header), input, header, steps: [masking(target, resolver)] };
  }
  if (decorated) return { manual: `its key is the ${header} header of the request in the GraphQL context, and the method takes no @Ctx() parameter: add one and ${snippet(`<context>.request.headers.get('${header.toLowerCase()}') ?? undefined`)}` };
  const name = freeName(resolver);
  if (!name || params.length !== 2) return { manual: `its key is the ${header} header of the request in the GraphQL context, which this resolver does not take: ${snippet(`context.request.headers.get('${header.toLowerCase()}') ?? undefined`)}` };
  const typed = /\.(c|m)?tsx?$/.test(resolver.getSourceFile().getFilePath());
  return { key: yogaKey(name, header), input, header, addParameter: { name, ...(typed ? { type: CONTEXT_TYPE } : {}) }, steps: [masking(target, resolver)] };
}
