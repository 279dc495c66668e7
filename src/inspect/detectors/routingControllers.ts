import { ts } from 'ts-morph';
import { decoratorCall, decoratorsOf, objectProperty, propertyName, stringValue, unwrap } from '../parse/astHelpers.js';
import { functionKeyOf } from '../parse/functionKey.js';
import { joinPath } from '../resolve/buildEndpoints.js';
import type { HttpMethod } from '../types.js';
import { delegateOf } from './routeHandlers.js';
import type { Detector, FileContext, FileFacts } from './detectorTypes.js';

const MODULE = 'routing-controllers';
const CONTROLLERS = new Set(['Controller', 'JsonController']);
const METHODS: Record<string, HttpMethod> = { Post: 'POST', Put: 'PUT', Patch: 'PATCH', Delete: 'DELETE', All: 'ALL' };
/** The server factories whose options carry the `routePrefix` every controller path is mounted under. */
const SERVERS = new Set(['createExpressServer', 'useExpressServer', 'createKoaServer', 'useKoaServer']);

/**
 * routing-controllers (typestack): `@JsonController('/pets')` classes whose `@Post()` methods are routes on the
 * Express or Koa app the project hands to `useExpressServer(app, { routePrefix })`. The paths are absolute already
 * (controller path + method path); the package's `routePrefix` is joined when the endpoints are built.
 */
export const routingControllers: Detector = {
  name: 'routing-controllers',
  mentions: /routing-controllers/,
  detect(ctx, facts) {
    for (const cls of ctx.index.classes) {
      const controller = decoratorsOf(cls)
        .map(decoratorCall)
        .find((d) => d && CONTROLLERS.has(ownName(d.name, ctx) ?? ''));
      if (controller) recordController(cls, controller.args[0], ctx, facts);
    }
    for (const call of ctx.index.calls) {
      if (!ts.isIdentifier(call.expression)) continue;
      const name = ownName(call.expression.text, ctx);
      if (!name || !SERVERS.has(name)) continue;
      const options = call.arguments.find((arg) => ts.isObjectLiteralExpression(unwrap(arg)));
      const prefix = options ? objectProperty(unwrap(options), 'routePrefix') : undefined;
      // A prefix from the environment or a settings object is unknown here: the routes are then flagged unresolved.
      facts.routePrefixes.push({ file: ctx.rel, prefix: prefix === undefined ? '' : (stringValue(prefix, ctx.index.consts) ?? null) });
    }
  },
};

/** The routing-controllers name of a local binding (aliases followed), or undefined when it comes from elsewhere. */
function ownName(local: string, ctx: FileContext): string | undefined {
  const origin = ctx.index.imports.get(local);
  return origin?.module === MODULE ? origin.imported : undefined;
}

/** `@Post('/x')`, `@Method('post', '/x')`: the method and path of a route decorator, or undefined. */
function routeOf(decorator: { name: string; args: readonly ts.Expression[] }, ctx: FileContext): { method: HttpMethod; path: ts.Expression | undefined } | undefined {
  const name = ownName(decorator.name, ctx);
  if (!name) return undefined;
  if (name === 'Method') {
    const verb = stringValue(decorator.args[0], ctx.index.consts)?.toUpperCase();
    const method = verb ? METHODS[verb.charAt(0) + verb.slice(1).toLowerCase()] : undefined;
    return method ? { method, path: decorator.args[1] } : undefined;
  }
  const method = METHODS[name];
  return method ? { method, path: decorator.args[0] } : undefined;
}

function recordController(cls: ts.ClassLikeDeclaration, prefixArg: ts.Expression | undefined, ctx: FileContext, facts: FileFacts): void {
  const prefix = prefixArg === undefined ? '' : stringValue(prefixArg, ctx.index.consts);
  for (const member of cls.members) {
    if (!ts.isMethodDeclaration(member)) continue;
    for (const decorator of decoratorsOf(member).map(decoratorCall)) {
      const route = decorator && routeOf(decorator, ctx);
      if (!route) continue;
      // A RegExp route (`@Post(/^\/x/)`) or a computed path has no text: kept, marked unresolved.
      const path = route.path === undefined ? '' : stringValue(route.path, ctx.index.consts);
      const body = bodyOf(member, ctx);
      const delegate = delegateOf(member, ctx);
      facts.routes.push({
        file: ctx.rel,
        line: ctx.line(member),
        method: route.method,
        path: joinPath(prefix ?? '', path ?? ''),
        framework: MODULE,
        handler: `${cls.name?.text ?? 'Controller'}.${propertyName(member.name) ?? '?'}`,
        handlerKeys: [functionKeyOf(member)],
        ...(delegate ? { delegate } : {}),
        bodyFields: body.fields,
        bodyShapes: body.shapes,
        prefixResolved: prefix !== undefined && path !== undefined,
      });
    }
  }
}

/** `@Body() pet: CreatePetBody` names a class; `@BodyParam('amount') amount` names a field. */
function bodyOf(method: ts.MethodDeclaration, ctx: FileContext): { fields: string[]; shapes: string[] } {
  const fields: string[] = [];
  const shapes: string[] = [];
  for (const param of method.parameters) {
    for (const decorator of decoratorsOf(param).map(decoratorCall)) {
      const name = decorator && ownName(decorator.name, ctx);
      if (name === 'BodyParam') {
        const field = stringValue(decorator?.args[0]);
        if (field) fields.push(field);
      } else if (name === 'Body' && param.type && ts.isTypeReferenceNode(param.type) && ts.isIdentifier(param.type.typeName)) {
        shapes.push(param.type.typeName.text);
      }
    }
  }
  return { fields, shapes };
}
