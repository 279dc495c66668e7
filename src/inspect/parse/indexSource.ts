import { AUTHENTICATES } from '../detectors/routeGuards.js';
import { ts } from 'ts-morph';
import { accessChain, isFunctionLike, propertyName, unwrap } from './astHelpers.js';
import { functionKeyOf } from './functionKey.js';
import { linkParents } from './parseSource.js';

export interface ImportBinding {
  module: string;
  /** Imported name, `default`, or `*` for a namespace / whole CommonJS module. */
  imported: string;
}

/** What a function does that later phases need across files: calls (for payment reachability) and request body use. */
export interface FunctionFacts {
  key: string;
  file: string;
  start: number;
  end: number;
  callees: Set<string>;
  bodyFields: Set<string>;
  /** Names of schemas / types the request body is validated or cast with. */
  bodyShapes: Set<string>;
  /**
   * The body goes on whole (`{ ...input, password: hash }`, `createTask(input)`): the fields read by name are then only
   * some of what the request asks for, so they are no fingerprint on their own.
   */
  bodyWhole?: true;
  /** The function's code authenticates a request (reads the Authorization header, verifies a token, sets the user). */
  authenticates?: true;
}

export interface ReExport {
  module: string;
  /** exported name → imported name; undefined for `export *`. */
  names?: Map<string, string>;
}

export interface SourceIndex {
  imports: Map<string, ImportBinding>;
  /** Exported name → local binding name. */
  exports: Map<string, string>;
  reExports: ReExport[];
  /** Every variable initializer by name (last one wins): enough for constants and `const app = express()`. */
  consts: Map<string, ts.Expression>;
  calls: ts.CallExpression[];
  news: ts.NewExpression[];
  classes: ts.ClassLikeDeclaration[];
  functions: Map<string, FunctionFacts>;
  /** Type-like declarations by name: property names of classes, interfaces, type literals, and object schemas. */
  shapes: Map<string, string[]>;
}

const BODY_VALIDATORS = new Set(['parse', 'safeParse', 'parseAsync', 'safeParseAsync', 'validate', 'validateSync', 'validateAsync', 'cast', 'assert', 'Check', 'Decode']);
const SCHEMA_BUILDERS = /^(z|zod|Joi|joi|yup|Type|t|v|s)$/;

/**
 * ts-morph's `ts` is an object of getters: `ts.SyntaxKind.X` in a switch calls one per case label tried, for every
 * node walked (a sixth of the walk). Read once here.
 */
const SK = ts.SyntaxKind;
const forEachChild = ts.forEachChild;

/**
 * One pass over the AST collecting what every detector needs, so detectors iterate small lists instead of
 * walking the tree again (the benchmark budget is 1.5× a bare parse). The same pass links `node.parent` (before a
 * node is looked at, so ancestors are always linked): the inspector parses without the compiler's parent pass.
 */
export function indexSource(sf: ts.SourceFile, file: string): SourceIndex {
  const index: SourceIndex = {
    imports: new Map(), exports: new Map(), reExports: [], consts: new Map(), calls: [], news: [], classes: [],
    functions: new Map(), shapes: new Map(),
  };
  // Per function: facts, plus names holding the request body (`const body = await req.json()`).
  const stack: Array<{ facts: FunctionFacts; bodyAliases: Set<string>; classAliases: Map<string, string> }> = [];
  let classAliases = new Map<string, string>();
  let className: string | undefined;
  let parent: ts.Node = sf;
  const authenticationAt = matchStarts(AUTHENTICATES_ALL, sf.text);

  const visit = (node: ts.Node): void => {
    (node as { parent: ts.Node }).parent = parent;
    let pushed = false;
    let savedClass: [Map<string, string>, string | undefined] | undefined;
    switch (node.kind) {
      case SK.ImportDeclaration:
        recordImport(node as ts.ImportDeclaration, index);
        linkParents(node);
        return;
      case SK.ExportDeclaration:
        recordExportDeclaration(node as ts.ExportDeclaration, index);
        linkParents(node);
        return;
      case SK.ExportAssignment: {
        const expr = unwrap((node as ts.ExportAssignment).expression);
        index.exports.set('default', exportedLocal(expr));
        break;
      }
      case SK.VariableDeclaration:
        recordVariable(node as ts.VariableDeclaration, index);
        break;
      case SK.CallExpression: {
        const call = node as ts.CallExpression;
        index.calls.push(call);
        recordRequire(call, index);
        if (stack.length) {
          const keys = callKeys(call, className, classAliases, index);
          for (const frame of stack) for (const key of keys) frame.facts.callees.add(key);
        }
        break;
      }
      case SK.NewExpression:
        index.news.push(node as ts.NewExpression);
        break;
      case SK.ClassDeclaration:
      case SK.ClassExpression: {
        const cls = node as ts.ClassLikeDeclaration;
        index.classes.push(cls);
        // `export default class UserController`: routes name its static methods through the export (`user.createUser`).
        recordExportedFunction(cls, index);
        savedClass = [classAliases, className];
        className = cls.name?.text;
        classAliases = injectedAliases(cls);
        if (cls.name) index.shapes.set(cls.name.text, [...memberNames(cls.members), ...inherited(cls)]);
        break;
      }
      case SK.InterfaceDeclaration: {
        const decl = node as ts.InterfaceDeclaration;
        index.shapes.set(decl.name.text, [...memberNames(decl.members), ...inherited(decl)]);
        break;
      }
      case SK.TypeAliasDeclaration: {
        const decl = node as ts.TypeAliasDeclaration;
        if (ts.isTypeLiteralNode(decl.type)) index.shapes.set(decl.name.text, memberNames(decl.type.members));
        else if (ts.isTypeReferenceNode(decl.type) && decl.type.typeArguments?.length === 1) {
          // `type CreateOrder = z.infer<typeof createOrderSchema>`: borrow the schema's fields later.
          const arg = decl.type.typeArguments[0];
          if (arg && ts.isTypeQueryNode(arg) && ts.isIdentifier(arg.exprName)) index.shapes.set(decl.name.text, [`@${arg.exprName.text}`]);
        }
        break;
      }
      case SK.BinaryExpression:
        recordCommonJsAssignment(node as ts.BinaryExpression, index);
        break;
      case SK.PropertyAccessExpression:
      case SK.Identifier:
        if (stack.length) recordBodyUse(node, stack[stack.length - 1]!);
        break;
    }
    if (node.kind === SK.CallExpression && stack.length) recordBodyJson(node as ts.CallExpression, stack[stack.length - 1]!);
    if (isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
      const key = functionKeyOf(node);
      let facts = index.functions.get(key);
      if (!facts) {
        facts = { key, file, start: node.getStart(sf), end: node.end, callees: new Set(), bodyFields: new Set(), bodyShapes: new Set() };
        if (startsWithin(authenticationAt, facts.start, facts.end) && AUTHENTICATES.test(sf.text.slice(facts.start, facts.end))) facts.authenticates = true;
        index.functions.set(key, facts);
      }
      stack.push({ facts, bodyAliases: new Set(), classAliases });
      pushed = true;
      recordExportedFunction(node, index);
    }
    const saved = parent;
    parent = node;
    forEachChild(node, visit);
    parent = saved;
    if (pushed) stack.pop();
    if (savedClass) [classAliases, className] = savedClass;
  };
  forEachChild(sf, visit);
  return index;
}

const AUTHENTICATES_ALL = new RegExp(AUTHENTICATES.source, `${AUTHENTICATES.flags.replace('g', '')}g`);

/**
 * Every position where the global `pattern` matches in `text`, overlapping ones included, from one scan of the file.
 * Testing a function's own text then costs a lookup rather than a scan of it (nested functions scanned the same text
 * once per level): a match inside a function's text is a match of the whole text at the same place, since the
 * pattern's only assertions are `\b`, and a function starts at a token, which no word character precedes.
 */
function matchStarts(pattern: RegExp, text: string): number[] {
  const starts: number[] = [];
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    starts.push(match.index);
    pattern.lastIndex = match.index + 1;
  }
  return starts;
}

/** Does any of the ascending `starts` fall in [start, end)? */
function startsWithin(starts: readonly number[], start: number, end: number): boolean {
  let low = 0;
  let high = starts.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (starts[mid]! < start) low = mid + 1;
    else high = mid;
  }
  return low < starts.length && starts[low]! < end;
}

function recordImport(decl: ts.ImportDeclaration, index: SourceIndex): void {
  if (!ts.isStringLiteral(decl.moduleSpecifier)) return;
  const module = decl.moduleSpecifier.text;
  const clause = decl.importClause;
  if (!clause) return;
  if (clause.name) index.imports.set(clause.name.text, { module, imported: 'default' });
  const bindings = clause.namedBindings;
  if (bindings && ts.isNamespaceImport(bindings)) index.imports.set(bindings.name.text, { module, imported: '*' });
  else if (bindings) {
    for (const el of bindings.elements) index.imports.set(el.name.text, { module, imported: el.propertyName ? propertyName(el.propertyName) ?? el.name.text : el.name.text });
  }
}

function recordExportDeclaration(decl: ts.ExportDeclaration, index: SourceIndex): void {
  const module = decl.moduleSpecifier && ts.isStringLiteral(decl.moduleSpecifier) ? decl.moduleSpecifier.text : undefined;
  const clause = decl.exportClause;
  if (module) {
    if (!clause) index.reExports.push({ module });
    else if (ts.isNamedExports(clause)) {
      const names = new Map<string, string>();
      for (const el of clause.elements) names.set(el.name.text, el.propertyName ? propertyName(el.propertyName) ?? el.name.text : el.name.text);
      index.reExports.push({ module, names });
    } else if (ts.isNamespaceExport(clause)) {
      index.imports.set(clause.name.text, { module, imported: '*' });
      index.exports.set(clause.name.text, clause.name.text);
    }
    return;
  }
  if (clause && ts.isNamedExports(clause)) {
    for (const el of clause.elements) index.exports.set(el.name.text, el.propertyName ? propertyName(el.propertyName) ?? el.name.text : el.name.text);
  }
}

function recordVariable(decl: ts.VariableDeclaration, index: SourceIndex): void {
  const exported = isExported(decl.parent?.parent);
  if (ts.isIdentifier(decl.name)) {
    if (decl.initializer) index.consts.set(decl.name.text, decl.initializer);
    if (exported) index.exports.set(decl.name.text, decl.name.text);
    const init = decl.initializer && unwrap(decl.initializer);
    // Object schemas (zod, Joi, yup, TypeBox, valibot) give body fields by name.
    if (init && ts.isCallExpression(init)) {
      const shape = schemaShape(init);
      if (shape) index.shapes.set(decl.name.text, shape);
    }
  }
}

function schemaShape(call: ts.CallExpression): string[] | undefined {
  // Walk through `.strict()`, `.extend()` style chains to the `x.object({...})` at the root.
  let current: ts.Expression = call;
  for (let i = 0; i < 6 && ts.isCallExpression(current); i++) {
    const callee: ts.Expression = current.expression;
    if (ts.isPropertyAccessExpression(callee) && /^(object|Object|strictObject|looseObject)$/.test(callee.name.text)) {
      const root = accessChain(callee.expression)[0] ?? '';
      const arg = current.arguments[0];
      if (SCHEMA_BUILDERS.test(root) && arg && ts.isObjectLiteralExpression(arg)) {
        return arg.properties.flatMap((p) => {
          const name = p.name ? propertyName(p.name as ts.PropertyName) : undefined;
          return name ? [name] : [];
        });
      }
    }
    current = ts.isPropertyAccessExpression(callee) ? callee.expression : callee;
  }
  return undefined;
}

function memberNames(members: ts.NodeArray<ts.ClassElement | ts.TypeElement>): string[] {
  const names: string[] = [];
  for (const m of members) {
    if ((ts.isPropertyDeclaration(m) || ts.isPropertySignature(m)) && m.name) {
      const name = propertyName(m.name);
      if (name) names.push(name);
    }
  }
  return names;
}

function isExported(statement: ts.Node | undefined): boolean {
  if (!statement || !ts.canHaveModifiers(statement)) return false;
  return (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

function recordExportedFunction(node: ts.Node, index: SourceIndex): void {
  if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node)) && isExported(node)) {
    const mods = ts.getModifiers(node) ?? [];
    const isDefault = mods.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
    const local = node.name?.text ?? '<default>';
    index.exports.set(isDefault ? 'default' : local, local);
  }
}

function exportedLocal(expr: ts.Expression): string {
  if (ts.isIdentifier(expr)) return expr.text;
  if (ts.isFunctionExpression(expr) || ts.isArrowFunction(expr)) return '<default>';
  // `export default fp(plugin)` / `export default wrap(router)`: the wrapped binding is what owns the routes.
  if (ts.isCallExpression(expr) && expr.arguments[0] && ts.isIdentifier(expr.arguments[0])) return expr.arguments[0].text;
  return '<default>';
}

function recordRequire(call: ts.CallExpression, index: SourceIndex): void {
  if (!ts.isIdentifier(call.expression) || call.expression.text !== 'require') return;
  const arg = call.arguments[0];
  if (!arg || !ts.isStringLiteral(arg)) return;
  const module = arg.text;
  let parent = call.parent;
  let member: string | undefined;
  if (parent && ts.isPropertyAccessExpression(parent)) {
    member = parent.name.text; // const Router = require('express').Router
    parent = parent.parent;
  }
  if (!parent || !ts.isVariableDeclaration(parent)) return;
  if (ts.isIdentifier(parent.name)) index.imports.set(parent.name.text, { module, imported: member ?? '*' });
  else if (ts.isObjectBindingPattern(parent.name)) {
    for (const el of parent.name.elements) {
      if (ts.isIdentifier(el.name)) index.imports.set(el.name.text, { module, imported: propertyName(el.propertyName) ?? el.name.text });
    }
  }
}

/** `module.exports = router`, `module.exports = { a, b }`, `exports.a = a`. */
function recordCommonJsAssignment(bin: ts.BinaryExpression, index: SourceIndex): void {
  if (bin.operatorToken.kind !== ts.SyntaxKind.EqualsToken || !ts.isPropertyAccessExpression(bin.left)) return;
  const chain = accessChain(bin.left);
  const right = unwrap(bin.right);
  if (chain.length === 2 && chain[0] === 'module' && chain[1] === 'exports') {
    index.exports.set('default', exportedLocal(right));
    if (ts.isObjectLiteralExpression(right)) {
      for (const p of right.properties) {
        if (ts.isShorthandPropertyAssignment(p)) index.exports.set(p.name.text, p.name.text);
        else if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.initializer)) {
          const name = propertyName(p.name);
          if (name) index.exports.set(name, p.initializer.text);
        } else if (ts.isPropertyAssignment(p)) {
          const name = propertyName(p.name);
          if (name) wholeModuleExport(name, unwrap(p.initializer), index);
        }
      }
    }
  } else if ((chain.length === 2 && chain[0] === 'exports') || (chain.length === 3 && chain[0] === 'module' && chain[1] === 'exports')) {
    const name = chain[chain.length - 1] as string;
    index.exports.set(name, ts.isIdentifier(right) ? right.text : name);
    if (!ts.isIdentifier(right)) index.consts.set(name, right);
    wholeModuleExport(name, right, index);
  }
}

/**
 * `module.exports.emailService = require('./email.service')` (or `{ emailService: require(…) }`): the name is that
 * whole module, as `export * as emailService from './email.service'` says, so calls through it reach its functions.
 */
function wholeModuleExport(name: string, value: ts.Expression, index: SourceIndex): void {
  if (!ts.isCallExpression(value) || !ts.isIdentifier(value.expression) || value.expression.text !== 'require') return;
  const arg = value.arguments[0];
  if (!arg || !ts.isStringLiteral(arg)) return;
  index.imports.set(name, { module: arg.text, imported: '*' });
  index.exports.set(name, name);
}

/** Constructor-injected dependencies: `constructor(private payments: PaymentsService)` → payments ↦ paymentsservice. */
function injectedAliases(cls: ts.ClassLikeDeclaration): Map<string, string> {
  const aliases = new Map<string, string>();
  for (const member of cls.members) {
    if (ts.isConstructorDeclaration(member)) {
      for (const param of member.parameters) {
        if (ts.isIdentifier(param.name) && param.type && ts.isTypeReferenceNode(param.type) && ts.isIdentifier(param.type.typeName)) {
          aliases.set(param.name.text.toLowerCase(), param.type.typeName.text.toLowerCase());
        }
      }
    } else if (ts.isPropertyDeclaration(member) && member.type && ts.isTypeReferenceNode(member.type) && ts.isIdentifier(member.type.typeName)) {
      const name = propertyName(member.name);
      if (name) aliases.set(name.toLowerCase(), member.type.typeName.text.toLowerCase());
    }
  }
  return aliases;
}

/** Names a call may refer to in the function index (see functionKeyOf). */
function callKeys(call: ts.CallExpression, className: string | undefined, aliases: Map<string, string>, index: SourceIndex): string[] {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) {
    const imported = index.imports.get(callee.text);
    const name = imported && imported.imported !== '*' && imported.imported !== 'default' ? imported.imported : callee.text;
    return [name.toLowerCase()];
  }
  if (!ts.isPropertyAccessExpression(callee)) return [];
  const method = callee.name.text.toLowerCase();
  const chain = accessChain(callee.expression);
  if (chain.length === 1 && chain[0] === 'this') return [`${(className ?? '?').toLowerCase()}.${method}`];
  const receiver = (chain[chain.length - 1] ?? '').replace(/\(\)$/, '').toLowerCase();
  const keys = [`${receiver}.${method}`];
  const typed = aliases.get(receiver);
  if (typed) keys.push(`${typed}.${method}`);
  const root = chain[0];
  if (chain.length === 1 && root && index.imports.get(root)) keys.push(method);
  return keys;
}

/** `req.body`, `ctx.request.body`, and aliases of them inside the current function. */
function recordBodyUse(node: ts.Node, frame: { facts: FunctionFacts; bodyAliases: Set<string> }): void {
  let isBody = false;
  if (ts.isPropertyAccessExpression(node)) isBody = node.name.text === 'body' && !(ts.isCallExpression(node.parent) && node.parent.expression === node);
  else if (ts.isIdentifier(node)) {
    isBody = frame.bodyAliases.has(node.text) && !(node.parent && ts.isVariableDeclaration(node.parent) && node.parent.name === node) && !(node.parent && ts.isPropertyAccessExpression(node.parent) && node.parent.name === node);
  }
  if (isBody) recordBodyContext(node as ts.Expression, frame);
}

/** `await req.json()`, `c.req.json()`, `c.req.valid('json')`. */
function recordBodyJson(call: ts.CallExpression, frame: { facts: FunctionFacts; bodyAliases: Set<string> }): void {
  const callee = call.expression;
  if (!ts.isPropertyAccessExpression(callee)) return;
  const name = callee.name.text;
  const chain = accessChain(callee.expression);
  const receiver = chain[chain.length - 1] ?? '';
  const isJson = name === 'json' && call.arguments.length === 0 && /^(req|request)$/i.test(receiver);
  const isValid = name === 'valid' && receiver === 'req' && call.arguments[0] && ts.isStringLiteral(call.arguments[0]) && (call.arguments[0].text === 'json' || call.arguments[0].text === 'form');
  if (isJson || isValid) recordBodyContext(call, frame);
}

function recordBodyContext(expr: ts.Expression, frame: { facts: FunctionFacts; bodyAliases: Set<string> }): void {
  let node: ts.Node = expr;
  while (node.parent && (ts.isAwaitExpression(node.parent) || ts.isParenthesizedExpression(node.parent) || ts.isAsExpression(node.parent) || ts.isNonNullExpression(node.parent) || ts.isSatisfiesExpression(node.parent))) {
    if (ts.isAsExpression(node.parent) && ts.isTypeReferenceNode(node.parent.type) && ts.isIdentifier(node.parent.type.typeName)) {
      frame.facts.bodyShapes.add(node.parent.type.typeName.text);
    } else if (ts.isAsExpression(node.parent) && ts.isTypeLiteralNode(node.parent.type)) {
      for (const name of memberNames(node.parent.type.members)) frame.facts.bodyFields.add(name);
    }
    node = node.parent;
  }
  const parent = node.parent;
  if (!parent) return;
  if (ts.isPropertyAccessExpression(parent) && parent.expression === node) {
    if (!/^(then|catch)$/.test(parent.name.text)) frame.facts.bodyFields.add(parent.name.text);
  } else if (ts.isElementAccessExpression(parent) && ts.isStringLiteral(parent.argumentExpression)) {
    frame.facts.bodyFields.add(parent.argumentExpression.text);
  } else if (ts.isVariableDeclaration(parent) && parent.initializer === node) {
    if (ts.isObjectBindingPattern(parent.name)) {
      for (const el of parent.name.elements) {
        const name = propertyName(el.propertyName) ?? (ts.isIdentifier(el.name) ? el.name.text : undefined);
        if (name && !el.dotDotDotToken) frame.facts.bodyFields.add(name);
      }
    } else if (ts.isIdentifier(parent.name)) {
      frame.bodyAliases.add(parent.name.text);
      if (parent.type && ts.isTypeReferenceNode(parent.type) && ts.isIdentifier(parent.type.typeName)) frame.facts.bodyShapes.add(parent.type.typeName.text);
    }
  } else if (ts.isSpreadAssignment(parent) || ts.isSpreadElement(parent)) {
    frame.facts.bodyWhole = true;
  } else if (ts.isCallExpression(parent) && parent.arguments.includes(node as ts.Expression) && schemaArgument(parent, node as ts.Expression) !== undefined) {
    // `validateWithSchema(checkoutSchema, req.body)`, `v.parse(Schema, body)`: the schema is the other argument, and
    // what the call returns is the body as validated.
    frame.facts.bodyShapes.add(schemaArgument(parent, node as ts.Expression)!);
    recordBodyContext(parent, frame);
  } else if (ts.isCallExpression(parent) && parent.arguments.includes(node as ts.Expression) && !(ts.isPropertyAccessExpression(parent.expression) && BODY_VALIDATORS.has(parent.expression.name.text))) {
    frame.facts.bodyWhole = true;
  } else if (ts.isCallExpression(parent) && parent.arguments.includes(node as ts.Expression) && ts.isPropertyAccessExpression(parent.expression)) {
    if (BODY_VALIDATORS.has(parent.expression.name.text)) {
      const schema = accessChain(parent.expression.expression)[0];
      if (schema) frame.facts.bodyShapes.add(schema);
      // `const input = schema.parse(req.body)` makes `input` the body too.
      const holder = parent.parent && ts.isAwaitExpression(parent.parent) ? parent.parent.parent : parent.parent;
      if (holder && ts.isVariableDeclaration(holder)) recordBodyContext(parent, frame);
    }
  }
}

/** A validation function's name, called with the schema and the body: `validateWithSchema`, `validateBody`, `parse` (valibot). */
const VALIDATE_FUNCTION = /^(validate|parse|safeParse|parseAsync|check|assert|decode)[A-Z]?\w*$/;

/**
 * The schema passed beside the body to a validation function (`validateWithSchema(schema, req.body)`,
 * `validate(req.body, schema)`, valibot's `v.parse(Schema, body)`): the other argument, when it is a name; undefined
 * for any other call (the body is then handed on whole).
 */
function schemaArgument(call: ts.CallExpression, body: ts.Expression): string | undefined {
  const callee = call.expression;
  const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
  if (name === undefined || call.arguments.length !== 2 || !VALIDATE_FUNCTION.test(name)) return undefined;
  const other = call.arguments.find((argument) => argument !== body);
  const schema = other && ts.isPropertyAccessExpression(other) ? other.name : other;
  return schema && ts.isIdentifier(schema) && !SCHEMA_BUILDERS.test(schema.text) ? schema.text : undefined;
}

/**
 * What a DTO inherits, as `@Base` references resolved with the other shapes: `class CreatePetBody extends BasePet`,
 * `interface A extends B, C`, and Nest's mapped types (`extends PartialType(CreateOrderDto)`, `IntersectionType(A, B)`).
 */
function inherited(decl: ts.ClassLikeDeclaration | ts.InterfaceDeclaration): string[] {
  const out: string[] = [];
  for (const clause of decl.heritageClauses ?? []) {
    if (clause.token !== ts.SyntaxKind.ExtendsKeyword) continue;
    for (const type of clause.types) {
      const expr = type.expression;
      if (ts.isIdentifier(expr)) out.push(`@${expr.text}`);
      else if (ts.isCallExpression(expr)) for (const arg of expr.arguments) if (ts.isIdentifier(arg)) out.push(`@${arg.text}`);
    }
  }
  return out;
}
