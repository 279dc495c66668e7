import { ts } from 'ts-morph';
import { decoratorCall, decoratorsOf, isFunctionLike, propertyName, stringValue, unwrap } from '../parse/astHelpers.js';
import { functionKeyOf } from '../parse/functionKey.js';
import { delegateOf } from './routeHandlers.js';
import type { Detector, FileContext, FileFacts, RawRoute } from './detectorTypes.js';

/** Libraries whose `@Mutation()` method decorator declares a GraphQL mutation (and `@Arg` / `@Args` its arguments). */
const DECORATOR_MODULES = new Set(['@nestjs/graphql', 'type-graphql', 'type-graphql/dist']);
const ARG_DECORATORS = new Set(['Arg', 'Args']);

/**
 * GraphQL mutations: a client retries them like any POST, and every one arrives at the one /graphql endpoint, so each
 * is an endpoint of its own named by the mutation (`POST /addPet`, path unresolved, transport 'graphql'), as tRPC
 * procedures are. Two shapes: decorated resolver methods (`@Mutation(() => Pet) addPet(@Arg('pet') pet)`, NestJS and
 * TypeGraphQL) and resolver maps (`resolvers = { Mutation: { addPet: async (parent, args, ctx) => … } }`, Apollo
 * Server, GraphQL Yoga, Mercurius).
 */
export const graphqlMutations: Detector = {
  name: 'graphql-mutations',
  mentions: /\bMutation\b/,
  detect(ctx, facts) {
    const decorated = [...ctx.index.imports.entries()].some(([, binding]) => DECORATOR_MODULES.has(binding.module) && binding.imported === 'Mutation');
    if (decorated) for (const cls of ctx.index.classes) recordDecorated(cls, ctx, facts);
    recordResolverMaps(ctx, facts);
  },
};

const fromLibrary = (local: string, ctx: FileContext, name: string): boolean => {
  const origin = ctx.index.imports.get(local);
  return origin !== undefined && DECORATOR_MODULES.has(origin.module) && origin.imported === name;
};

function recordDecorated(cls: ts.ClassLikeDeclaration, ctx: FileContext, facts: FileFacts): void {
  for (const member of cls.members) {
    if (!ts.isMethodDeclaration(member)) continue;
    const mutation = decoratorsOf(member)
      .map(decoratorCall)
      .find((d) => d && fromLibrary(d.name, ctx, 'Mutation'));
    if (!mutation) continue;
    // `@Mutation(() => Pet, { name: 'createPet' })` renames the field the client calls.
    const options = mutation.args.find((arg) => ts.isObjectLiteralExpression(unwrap(arg)));
    const renamed = options ? stringValue(objectName(unwrap(options) as ts.ObjectLiteralExpression), ctx.index.consts) : undefined;
    const name = renamed ?? propertyName(member.name);
    if (!name) continue;
    const fields: string[] = [];
    const shapes: string[] = [];
    for (const param of member.parameters) {
      const arg = decoratorsOf(param)
        .map(decoratorCall)
        .find((d) => d && ARG_DECORATORS.has(ctx.index.imports.get(d.name)?.imported ?? ''));
      if (!arg) continue;
      const field = stringValue(arg.args[0], ctx.index.consts);
      if (field) fields.push(field);
      if (param.type && ts.isTypeReferenceNode(param.type) && ts.isIdentifier(param.type.typeName)) shapes.push(param.type.typeName.text);
    }
    const delegate = delegateOf(member, ctx);
    facts.routes.push(route(ctx, member, name, `${cls.name?.text ?? 'Resolver'}.${propertyName(member.name) ?? name}`, [functionKeyOf(member)], fields, shapes, delegate));
  }
}

function objectName(options: ts.ObjectLiteralExpression): ts.Expression | undefined {
  for (const property of options.properties) if (ts.isPropertyAssignment(property) && propertyName(property.name) === 'name') return property.initializer;
  return undefined;
}

/** `Mutation: { addPet: async (parent, args) => … }` anywhere in the file, and `Mutation: { addPet(parent, args) { … } }`. */
function recordResolverMaps(ctx: FileContext, facts: FileFacts): void {
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAssignment(node) && propertyName(node.name) === 'Mutation') {
      const map = unwrap(node.initializer);
      if (ts.isObjectLiteralExpression(map)) {
        for (const property of map.properties) {
          const name = property.name ? propertyName(property.name) : undefined;
          const fn = ts.isMethodDeclaration(property) ? property : ts.isPropertyAssignment(property) ? unwrap(property.initializer) : undefined;
          if (!name || !fn || !isFunctionLike(fn)) continue;
          const args = (fn as ts.FunctionLikeDeclaration).parameters[1];
          const fields = args && ts.isObjectBindingPattern(args.name) ? args.name.elements.flatMap((el) => propertyName(el.propertyName ?? el.name) ?? []) : [];
          facts.routes.push(route(ctx, property, name, name, [functionKeyOf(fn as ts.FunctionLikeDeclaration)], fields, []));
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(ctx.sf);
}

function route(ctx: FileContext, node: ts.Node, name: string, handler: string, handlerKeys: string[], fields: string[], shapes: string[], delegate?: string): RawRoute {
  return {
    file: ctx.rel,
    line: ctx.line(node),
    method: 'POST',
    path: `/${name}`,
    framework: 'graphql',
    handler,
    handlerKeys,
    ...(delegate ? { delegate } : {}),
    bodyFields: fields,
    bodyShapes: shapes,
    prefixResolved: false,
    transport: 'graphql',
  };
}
