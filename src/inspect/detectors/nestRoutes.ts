import { ts } from 'ts-morph';
import { accessChain, decoratorCall, decoratorsOf, objectProperty, propertyName, stringValue, unwrap } from '../parse/astHelpers.js';
import { functionKeyOf } from '../parse/functionKey.js';
import type { HttpMethod } from '../types.js';
import { delegateOf } from './routeHandlers.js';
import type { Detector, FileContext, FileFacts, NestPathPart, RawRoute } from './detectorTypes.js';

const NEST_METHODS: Record<string, HttpMethod> = { Post: 'POST', Put: 'PUT', Patch: 'PATCH', Delete: 'DELETE', All: 'ALL' };

/** NestJS controllers, plus the bootstrap's setGlobalPrefix / enableVersioning that prefix every route. */
export const nestRoutes: Detector = {
  name: 'nestjs',
  mentions: /@nestjs\/(common|core)|setGlobalPrefix|enableVersioning/,
  detect(ctx, facts) {
    for (const cls of ctx.index.classes) {
      const decorators = decoratorsOf(cls).map(decoratorCall);
      const controller = decorators.find((d) => d && nestName(d.name, ctx) === 'Controller');
      if (controller) {
        recordController(cls, controller.args, ctx, facts);
        continue;
      }
      // A class with Nest route methods under a decorator of the project's own (`@PaymentController('stripe')`,
      // built with applyDecorators(Controller(...))) is a controller too; its path is read across files.
      const custom = decorators.find((d) => d && !fromNest(d.name, ctx));
      if (custom && hasNestRoutes(cls, ctx)) {
        const args = custom.args.map((arg) => stringValue(arg, ctx.index.consts));
        recordController(cls, [], ctx, facts, { decorator: custom.name, args });
      }
    }
    recordControllerFactories(ctx, facts);
    recordBootstrap(ctx, facts);
  },
};

/** The Nest name of a decorator, following import aliases (`import { Post as HttpPost }`). */
function nestName(local: string, ctx: FileContext): string | undefined {
  const origin = ctx.index.imports.get(local);
  if (origin) return origin.module === '@nestjs/common' ? origin.imported : undefined;
  return local;
}

const fromNest = (local: string, ctx: FileContext): boolean => ctx.index.imports.get(local)?.module === '@nestjs/common';

function hasNestRoutes(cls: ts.ClassLikeDeclaration, ctx: FileContext): boolean {
  return cls.members.some(
    (member) =>
      ts.isMethodDeclaration(member) &&
      decoratorsOf(member)
        .map(decoratorCall)
        .some((d) => d !== undefined && fromNest(d.name, ctx) && NEST_METHODS[nestName(d.name, ctx) ?? ''] !== undefined),
  );
}

/**
 * Functions of this file that call Nest's `Controller(...)` outside a decorator: a class decorator of the project's
 * own. Its path becomes a template over the function's parameters.
 */
function recordControllerFactories(ctx: FileContext, facts: FileFacts): void {
  for (const call of ctx.index.calls) {
    if (!ts.isIdentifier(call.expression) || !fromNest(call.expression.text, ctx) || nestName(call.expression.text, ctx) !== 'Controller') continue;
    if (call.parent && ts.isDecorator(call.parent)) continue;
    let fn: ts.Node | undefined = call.parent;
    while (fn && !ts.isFunctionDeclaration(fn) && !ts.isArrowFunction(fn) && !ts.isFunctionExpression(fn)) fn = fn.parent;
    if (!fn) continue;
    const declaration = fn as ts.FunctionDeclaration | ts.ArrowFunction | ts.FunctionExpression;
    const name = ts.isFunctionDeclaration(declaration)
      ? declaration.name?.text
      : declaration.parent && ts.isVariableDeclaration(declaration.parent) && ts.isIdentifier(declaration.parent.name)
        ? declaration.parent.name.text
        : undefined;
    if (!name) continue;
    const params = declaration.parameters.map((param) => (ts.isIdentifier(param.name) ? param.name.text : ''));
    let options = call.arguments[0];
    // `const options: ControllerOptions = { path }; ... Controller(options)`
    for (let hops = 0; options && ts.isIdentifier(unwrap(options)) && hops < 4; hops += 1) {
      const name = (unwrap(options) as ts.Identifier).text;
      if (params.includes(name)) break;
      options = ctx.index.consts.get(name) ?? options;
      if (!ctx.index.consts.has(name)) break;
    }
    const pathExpr = options && ts.isObjectLiteralExpression(unwrap(options)) ? objectProperty(options, 'path') : options;
    facts.nestControllerFactories.set(name, { parts: pathExpr ? pathParts(pathExpr, params, ctx, 0) : [] });
  }
}

/** A path expression as literal text, the factory's parameters and constants of other files; null when unreadable. */
function pathParts(expr: ts.Expression, params: readonly string[], ctx: FileContext, depth: number): NestPathPart[] | null {
  const node = unwrap(expr);
  if (depth > 4) return null;
  const literal = stringValue(node);
  if (literal !== undefined) return [{ text: literal }];
  if (ts.isIdentifier(node)) {
    const param = params.indexOf(node.text);
    if (param >= 0) return [{ param }];
    const local = ctx.index.consts.get(node.text);
    if (local) return pathParts(local, params, ctx, depth + 1);
    return ctx.index.imports.has(node.text) ? [{ ref: node.text }] : null;
  }
  if (ts.isTemplateExpression(node)) {
    const parts: NestPathPart[] = [{ text: node.head.text }];
    for (const span of node.templateSpans) {
      const inner = pathParts(span.expression, params, ctx, depth + 1);
      if (!inner) return null;
      parts.push(...inner, { text: span.literal.text });
    }
    return parts;
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = pathParts(node.left, params, ctx, depth + 1);
    const right = pathParts(node.right, params, ctx, depth + 1);
    return left && right ? [...left, ...right] : null;
  }
  return null;
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

function recordController(
  cls: ts.ClassLikeDeclaration,
  args: readonly ts.Expression[],
  ctx: FileContext,
  facts: FileFacts,
  via?: NonNullable<RawRoute['nest']>['via'],
): void {
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
      const delegate = delegateOf(member, ctx);
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
            ...(delegate ? { delegate } : {}),
            bodyFields: body.fields,
            bodyShapes: body.shapes,
            nest: { controller: controllerPath, method: methodPath, versions: methodVersions ?? classVersions, ...(via ? { via } : {}) },
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
