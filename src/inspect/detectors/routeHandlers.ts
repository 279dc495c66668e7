import { ts } from 'ts-morph';
import { accessChain, isFunctionLike, objectProperty, propertyName, unwrap } from '../parse/astHelpers.js';
import { functionKeyOf } from '../parse/functionKey.js';
import type { FileContext } from './detectorTypes.js';

export interface HandlerInfo {
  handler?: string;
  /** An inline handler that hands the request to one service method (`opts.paymentService.modifyPayment(…)`): its name. */
  delegate?: string;
  handlerKeys: string[];
  bodyFields: string[];
  bodyShapes: string[];
}

/**
 * Describes the handlers of a route registration: the last handler names the endpoint, the ones before it are
 * middleware whose arguments may name the body schema (`validate(createOrderSchema)`, `zValidator('json', s)`).
 */
export function describeHandlers(args: readonly ts.Expression[], ctx: FileContext): HandlerInfo {
  const info: HandlerInfo = { handlerKeys: [], bodyFields: [], bodyShapes: [] };
  const handlers = args.filter((a) => !ts.isObjectLiteralExpression(a) || objectProperty(a, 'handler'));
  const last = handlers[handlers.length - 1];
  for (const arg of args) {
    if (ts.isObjectLiteralExpression(arg)) collectFastifySchema(arg, info);
  }
  for (const middleware of handlers.slice(0, -1)) collectSchemaArgs(middleware, info);
  if (last) describeHandler(ts.isObjectLiteralExpression(last) ? objectProperty(last, 'handler') : last, ctx, info);
  return info;
}

function describeHandler(expr: ts.Expression | undefined, ctx: FileContext, info: HandlerInfo): void {
  if (!expr) return;
  const node = unwrap(expr);
  if (isFunctionLike(node)) {
    const key = functionKeyOf(node);
    info.handlerKeys.push(key);
    const name = (ts.isFunctionExpression(node) && node.name?.text) || undefined;
    if (name) info.handler = name;
    else {
      const delegate = delegateOf(node, ctx);
      if (delegate) info.delegate = delegate;
    }
    const facts = ctx.index.functions.get(key);
    if (facts) {
      // Fields read by name are not the whole request when the body is also handed on whole (buildEndpoints).
      if (!facts.bodyWhole) info.bodyFields.push(...facts.bodyFields);
      info.bodyShapes.push(...facts.bodyShapes);
    }
    return;
  }
  if (ts.isIdentifier(node)) {
    const imported = ctx.index.imports.get(node.text);
    const name = imported && imported.imported !== 'default' && imported.imported !== '*' ? imported.imported : node.text;
    info.handler = node.text;
    info.handlerKeys.push(name.toLowerCase());
    return;
  }
  if (ts.isPropertyAccessExpression(node)) {
    // `controller.create.bind(controller)` is the same handler.
    if (node.name.text === 'bind') return describeHandler(node.expression, ctx, info);
    const chain = accessChain(node).map((p) => p.replace(/\(\)$/, ''));
    info.handler = chain.join('.');
    const receiver = chain[chain.length - 2] ?? '';
    info.handlerKeys.push(`${receiver}.${node.name.text}`.toLowerCase());
    const root = chain[0];
    // `controller.create` of a default-imported object is found by its bare name; `handlers.create` of
    // `import * as handlers from './x'` is followed through the namespace (FunctionGraph), never by a name other files share.
    const binding = root ? ctx.index.imports.get(root) : undefined;
    if (chain.length === 2 && binding && !(binding.imported === '*' && isLocalModule(binding.module))) info.handlerKeys.push(node.name.text.toLowerCase());
    return;
  }
  if (ts.isCallExpression(node)) {
    if (ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'bind') return describeHandler(node.expression.expression, ctx, info);
    // asyncHandler(fn), catchErrors(fn), withAuth(fn): the wrapped function is the handler; earlier args may be schemas.
    const inner = node.arguments[node.arguments.length - 1];
    for (const arg of node.arguments.slice(0, -1)) collectSchemaArgs(arg, info);
    if (inner) describeHandler(inner, ctx, info);
  }
}

const SERVICE_NAME = /(service|controller|manager|usecase|useCase|interactor|facade)s?$/i;

/**
 * The method of the one service call in an inline handler: a call on a service the project hands the handler, by its
 * shape only: `opts.paymentService.modifyPayment(…)` (a field of a parameter, as Fastify plugins get their services),
 * or `orderService.cancel(…)` / `services.orders.cancel(…)` on a name that says it is a service, a parameter or a
 * relative import. Undefined when there is none or more than one (SDK, database and library calls never count).
 */
export function delegateOf(fn: ts.SignatureDeclaration, ctx: FileContext): string | undefined {
  const command = commandOf(fn);
  if (command) return command;
  const params = new Set(fn.parameters.flatMap((p) => (ts.isIdentifier(p.name) ? [p.name.text] : [])));
  for (let node: ts.Node | undefined = fn.parent; node; node = node.parent) {
    if (isFunctionLike(node)) for (const p of (node as ts.SignatureDeclaration).parameters) if (ts.isIdentifier(p.name)) params.add(p.name.text);
  }
  const found = new Set<string>();
  // Callbacks inside the handler (a transaction's, a `.catch`) run as part of it: their service calls count too, so
  // a side call before them (`fileManager.moveOldToTemp` ahead of the upload in a transaction) is not taken for
  // the one thing the handler does.
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const chain = accessChain(node.expression).map((p) => p.replace(/\(\)$/, ''));
      const holder = chain[chain.length - 2] ?? '';
      const root = chain[0] ?? '';
      const relative = ctx.index.imports.get(root)?.module.startsWith('.') === true;
      if (chain.length >= 2 && SERVICE_NAME.test(holder) && (params.has(root) || relative || root === holder)) found.add(node.expression.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(fn);
  return found.size === 1 ? [...found][0] : undefined;
}

/**
 * A command handed to a bus or a handler (CQRS: `this.commandBus.execute(new ProcessPaymentCommand(…))`,
 * `this.processHandler.execute(new ProcessPaymentCommand(…))`): the command says what the handler does, so
 * `processPayment`. Only when the function sends exactly one command class.
 */
function commandOf(fn: ts.SignatureDeclaration): string | undefined {
  const found = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (node !== fn && isFunctionLike(node)) return;
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && /^(execute|dispatch|send|handle)$/.test(node.expression.name.text)) {
      const arg = node.arguments.length === 1 ? unwrap(node.arguments[0]!) : undefined;
      const name = arg && ts.isNewExpression(arg) && ts.isIdentifier(arg.expression) ? /^([A-Z]\w*?)Command$/.exec(arg.expression.text)?.[1] : undefined;
      if (name) found.add(name.charAt(0).toLowerCase() + name.slice(1));
    }
    ts.forEachChild(node, visit);
  };
  visit(fn);
  return found.size === 1 ? [...found][0] : undefined;
}

function collectSchemaArgs(expr: ts.Expression, info: HandlerInfo): void {
  const node = unwrap(expr);
  if (ts.isIdentifier(node)) info.bodyShapes.push(node.text);
  else if (ts.isCallExpression(node)) for (const arg of node.arguments) collectSchemaArgs(arg, info);
  else if (ts.isPropertyAccessExpression(node)) info.bodyShapes.push(node.name.text);
}

/** Fastify route options: `{ schema: { body: CreateOrder | { properties: { … } } } }`. */
function collectFastifySchema(options: ts.ObjectLiteralExpression, info: HandlerInfo): void {
  const body = objectProperty(objectProperty(options, 'schema'), 'body');
  if (!body) return;
  const node = unwrap(body);
  if (ts.isIdentifier(node)) info.bodyShapes.push(node.text);
  const props = objectProperty(node, 'properties');
  if (props && ts.isObjectLiteralExpression(props)) {
    for (const p of props.properties) {
      const name = p.name ? propertyName(p.name as ts.PropertyName) : undefined;
      if (name) info.bodyFields.push(name);
    }
  }
  if (ts.isCallExpression(node) && node.arguments[0] && ts.isObjectLiteralExpression(node.arguments[0])) {
    for (const p of node.arguments[0].properties) {
      const name = p.name ? propertyName(p.name as ts.PropertyName) : undefined;
      if (name) info.bodyFields.push(name);
    }
  }
}

/** `fastify.post<{ Body: CreateOrder }>(…)` names the body type. */
export function bodyTypeArgument(call: ts.CallExpression): string | undefined {
  const arg = call.typeArguments?.[0];
  if (!arg || !ts.isTypeLiteralNode(arg)) return undefined;
  for (const member of arg.members) {
    if (ts.isPropertySignature(member) && propertyName(member.name) === 'Body' && member.type && ts.isTypeReferenceNode(member.type) && ts.isIdentifier(member.type.typeName)) {
      return member.type.typeName.text;
    }
  }
  return undefined;
}

/** A module of the project itself (relative or an `@/` / `~/` / `#/` alias), as opposed to a package. */
function isLocalModule(module: string): boolean {
  return module.startsWith('.') || /^[@~#]\//.test(module);
}
