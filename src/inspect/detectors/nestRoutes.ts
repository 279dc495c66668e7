import { ts } from 'ts-morph';
import { accessChain, decoratorCall, decoratorsOf, objectProperty, propertyName, stringValue, unwrap } from '../parse/astHelpers.js';
import { functionKeyOf } from '../parse/functionKey.js';
import type { HttpMethod } from '../types.js';
import type { Detector, FileContext, FileFacts } from './detectorTypes.js';

const NEST_METHODS: Record<string, HttpMethod> = { Post: 'POST', Put: 'PUT', Patch: 'PATCH', Delete: 'DELETE', All: 'ALL' };

/** NestJS controllers, plus the bootstrap's setGlobalPrefix / enableVersioning that prefix every route. */
export const nestRoutes: Detector = {
  name: 'nestjs',
  mentions: /@nestjs\/(common|core)|setGlobalPrefix|enableVersioning/,
  detect(ctx, facts) {
    for (const cls of ctx.index.classes) {
      const controller = decoratorsOf(cls).map(decoratorCall).find((d) => d && nestName(d.name, ctx) === 'Controller');
      if (controller) recordController(cls, controller.args, ctx, facts);
    }
    recordBootstrap(ctx, facts);
  },
};

/** The Nest name of a decorator, following import aliases (`import { Post as HttpPost }`). */
function nestName(local: string, ctx: FileContext): string | undefined {
  const origin = ctx.index.imports.get(local);
  if (origin) return origin.module === '@nestjs/common' ? origin.imported : undefined;
  return local;
}

function stringsOf(expr: ts.Expression | undefined, ctx: FileContext): string[] | undefined {
  if (!expr) return undefined;
  const node = unwrap(expr);
  if (ts.isArrayLiteralExpression(node)) {
    const values = node.elements.map((e) => stringValue(e, ctx.index.consts));
    return values.every((v): v is string => v !== undefined) ? values : undefined;
  }
  const value = stringValue(node, ctx.index.consts);
  return value === undefined ? undefined : [value];
}

/** `VERSION_NEUTRAL` means "no version segment"; represented as ''. */
function versionsOf(expr: ts.Expression | undefined, ctx: FileContext): string[] | undefined {
  if (!expr) return undefined;
  const node = unwrap(expr);
  const one = (e: ts.Expression): string => (/VERSION_NEUTRAL/.test(e.getText()) ? '' : (stringValue(e, ctx.index.consts) ?? '?'));
  return ts.isArrayLiteralExpression(node) ? node.elements.map(one) : [one(node)];
}

function recordController(cls: ts.ClassLikeDeclaration, args: readonly ts.Expression[], ctx: FileContext, facts: FileFacts): void {
  const options = args[0];
  let prefixes: string[] | undefined = [''];
  let classVersions: string[] | undefined;
  if (options && ts.isObjectLiteralExpression(unwrap(options))) {
    prefixes = objectProperty(options, 'path') ? stringsOf(objectProperty(options, 'path'), ctx) : [''];
    classVersions = versionsOf(objectProperty(options, 'version'), ctx);
  } else if (options) prefixes = stringsOf(options, ctx);
  const resolved = prefixes !== undefined;
  for (const member of cls.members) {
    if (!ts.isMethodDeclaration(member)) continue;
    const decorators = decoratorsOf(member).map(decoratorCall);
    let methodVersions: string[] | undefined;
    for (const d of decorators) if (d && nestName(d.name, ctx) === 'Version') methodVersions = versionsOf(d.args[0], ctx);
    for (const d of decorators) {
      const method = d ? NEST_METHODS[nestName(d.name, ctx) ?? ''] : undefined;
      if (!d || !method) continue;
      const paths = d.args[0] ? stringsOf(d.args[0], ctx) : [''];
      const body = bodyOf(member, ctx);
      for (const controllerPath of prefixes ?? ['']) {
        for (const methodPath of paths ?? ['']) {
          facts.routes.push({
            file: ctx.rel,
            line: ctx.line(member),
            method,
            path: '',
            framework: 'nestjs',
            handler: `${cls.name?.text ?? 'Controller'}.${propertyName(member.name) ?? '?'}`,
            handlerKeys: [functionKeyOf(member)],
            bodyFields: body.fields,
            bodyShapes: body.shapes,
            nest: { controller: controllerPath, method: methodPath, versions: methodVersions ?? classVersions },
            prefixResolved: resolved && paths !== undefined,
          });
        }
      }
    }
  }
}

/** `@Body() dto: CreateOrderDto` names a DTO; `@Body('amount') amount` names a field. */
function bodyOf(method: ts.MethodDeclaration, ctx: FileContext): { fields: string[]; shapes: string[] } {
  const fields: string[] = [];
  const shapes: string[] = [];
  for (const param of method.parameters) {
    const body = decoratorsOf(param).map(decoratorCall).find((d) => d && nestName(d.name, ctx) === 'Body');
    if (!body) continue;
    const field = stringValue(body.args[0]);
    if (field) fields.push(field);
    else if (param.type && ts.isTypeReferenceNode(param.type) && ts.isIdentifier(param.type.typeName)) shapes.push(param.type.typeName.text);
  }
  return { fields, shapes };
}

function recordBootstrap(ctx: FileContext, facts: FileFacts): void {
  let bootstrap: (typeof facts.nestBootstraps)[number] | undefined;
  const get = () => (bootstrap ??= { file: ctx.rel });
  for (const call of ctx.index.calls) {
    if (!ts.isPropertyAccessExpression(call.expression)) continue;
    const name = call.expression.name.text;
    if (name === 'setGlobalPrefix') get().globalPrefix = stringValue(call.arguments[0], ctx.index.consts) ?? null;
    else if (name === 'enableVersioning') {
      const options = call.arguments[0];
      const type = objectProperty(options, 'type');
      // URI is the default type; header and media-type versioning leave the path alone.
      if (type && !/URI/.test(accessChain(unwrap(type)).join('.'))) continue;
      const prefixExpr = objectProperty(options, 'prefix');
      const prefix = prefixExpr ? (prefixExpr.kind === ts.SyntaxKind.FalseKeyword ? '' : (stringValue(prefixExpr) ?? 'v')) : 'v';
      const defaults = versionsOf(objectProperty(options, 'defaultVersion'), ctx);
      get().uriVersioning = { prefix, ...(defaults ? { defaultVersion: defaults } : {}) };
    }
  }
  if (bootstrap) facts.nestBootstraps.push(bootstrap);
}
