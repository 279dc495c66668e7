import path from 'node:path';
import { ts } from 'ts-morph';
import { propertyName, stringValue, unwrap } from '../parse/astHelpers.js';
import type { DirLoad, FileContext, FileNameOp, FileNamePart, FileNameTest } from './detectorTypes.js';

/**
 * Route modules loaded in a loop over a directory's entries, and mounted with a path made from each entry's name:
 * `for (const file of fs.readdirSync(__dirname)) app.use('/' + file.replace(/\.js$/, ''), require('./' + file))`,
 * `readdirSync(dir).filter(…).forEach((f) => router.use(`/${f}`, require(`./routes/${f}`)))`, the ESM
 * `const { default: router } = await import(…)`. The loop's tests on the name (its filter, `if`s around the mount,
 * `if (…) continue` guards) and the path are kept as data, so the cross-file phase can list the directory's files.
 */
export function readdirLoad(child: ts.Expression, mountPath: ts.Expression | undefined, ctx: FileContext): DirLoad | undefined {
  const loop = enclosingLoop(child, ctx);
  if (!loop) return undefined;
  const loaded = loadedModule(child, loop);
  if (!loaded) return undefined;
  const spec = partsOf(loaded.spec, loop)?.filter((part) => part !== '');
  // `require('./cors')` in the loop's body loads one module, not the entry: an ordinary mount.
  if (spec?.every((part) => typeof part === 'string')) return undefined;
  // The directory is the text before the entry: `'./routes/' + file`, `path.join(__dirname, 'routes', file)`,
  // `./modules/${name}/router` (a folder per entry); else the one the loop reads.
  const entryAt = spec?.findIndex((part) => typeof part !== 'string') ?? -1;
  const before = spec?.slice(0, entryAt) as string[] | undefined;
  const dir = entryAt >= 0 && before ? path.posix.normalize(path.posix.join(path.posix.dirname(ctx.rel), before.join(''))).replace(/\/$/, '') : loop.dir;
  if (dir === undefined) return undefined;
  const prefix = mountPath ? partsOf(mountPath, loop) ?? null : [];
  return { dir, accept: loop.accept, prefix, module: spec ?? null, ...(loaded.member ? { member: loaded.member } : {}) };
}

interface Loop {
  /** What each name in scope is, as steps on the entry's name: the loop variable is `[]`. */
  names: Map<string, FileNameOp[]>;
  body: ts.Node;
  /** The directory the readdir call reads, when its argument says. */
  dir: string | undefined;
  accept: FileNameTest[][];
  ctx: FileContext;
}

/** The nearest `for (const f of readdir…)` or `readdir…(…).forEach((f) => …)` around `node`, with the tests on the way. */
function enclosingLoop(node: ts.Node, ctx: FileContext): Loop | undefined {
  const accept: FileNameTest[][] = [];
  const conditions: Array<{ expr: ts.Expression; negated: boolean }> = [];
  for (let child: ts.Node = node, parent = node.parent; parent && !ts.isSourceFile(parent); child = parent, parent = parent.parent) {
    if (ts.isIfStatement(parent) && child !== parent.expression) conditions.push({ expr: parent.expression, negated: child === parent.elseStatement });
    else if (ts.isConditionalExpression(parent) && child !== parent.condition) conditions.push({ expr: parent.condition, negated: child === parent.whenFalse });
    else if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken && child === parent.right) conditions.push({ expr: parent.left, negated: false });
    else if (ts.isBlock(parent)) {
      // `if (file === 'index.js') continue;` before the mount: the rest of the body runs only when it is false.
      for (const statement of parent.statements.slice(0, parent.statements.indexOf(child as ts.Statement))) {
        if (ts.isIfStatement(statement) && !statement.elseStatement && leaves(statement.thenStatement)) conditions.push({ expr: statement.expression, negated: true });
      }
    }
    const entries = loopEntries(parent, child);
    if (!entries) continue;
    // A `.filter` of a loop over something else is no test of the entries.
    const filters: FileNameTest[][] = [];
    const items = readdirItems(entries.items, ctx, filters);
    if (!items) continue;
    accept.push(...filters);
    const names = new Map([[entries.variable, [] as FileNameOp[]]]);
    const loop: Loop = { names, body: parent, dir: items.dir, accept, ctx };
    for (const c of conditions) accept.push(...(clauses(c.expr, c.negated, loop) ?? []));
    return loop;
  }
  return undefined;
}

const leaves = (statement: ts.Statement): boolean =>
  ts.isReturnStatement(statement) || ts.isContinueStatement(statement) || (ts.isBlock(statement) && statement.statements.length === 1 && leaves(statement.statements[0] as ts.Statement));

/** A loop whose body holds `child`: its entries and the variable naming one. */
function loopEntries(parent: ts.Node, child: ts.Node): { items: ts.Expression; variable: string } | undefined {
  if (ts.isForOfStatement(parent) && child === parent.statement && ts.isVariableDeclarationList(parent.initializer)) {
    const name = parent.initializer.declarations[0]?.name;
    return name && ts.isIdentifier(name) ? { items: parent.expression, variable: name.text } : undefined;
  }
  const call = parent.parent;
  if ((ts.isArrowFunction(parent) || ts.isFunctionExpression(parent)) && call && ts.isCallExpression(call) && call.arguments[0] === parent && ts.isPropertyAccessExpression(call.expression) && /^(forEach|map|flatMap)$/.test(call.expression.name.text)) {
    const name = parent.parameters[0]?.name;
    return name && ts.isIdentifier(name) ? { items: call.expression.expression, variable: name.text } : undefined;
  }
  return undefined;
}

/** `fs.readdirSync(dir)`, `await readdir(dir)`, through `.filter((f) => …)` (its test joins `accept`) and a local holding them. */
function readdirItems(expr: ts.Expression, ctx: FileContext, accept: FileNameTest[][], depth = 0): { dir: string | undefined } | undefined {
  const node = unwrap(expr);
  if (depth > 4) return undefined;
  if (ts.isIdentifier(node)) {
    const init = ctx.index.consts.get(node.text);
    return init ? readdirItems(init, ctx, accept, depth + 1) : undefined;
  }
  if (!ts.isCallExpression(node)) return undefined;
  const callee = node.expression;
  const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
  if (/^readdir(Sync)?$/.test(name)) return { dir: directoryOf(node.arguments[0], ctx) };
  if (!ts.isPropertyAccessExpression(callee) || !/^(filter|sort|reverse|slice)$/.test(name)) return undefined;
  const test = node.arguments[0];
  if (name === 'filter' && test && (ts.isArrowFunction(test) || ts.isFunctionExpression(test))) {
    const param = test.parameters[0]?.name;
    const body = ts.isBlock(test.body) ? test.body.statements.find(ts.isReturnStatement)?.expression : test.body;
    if (param && ts.isIdentifier(param) && body) accept.push(...(clauses(body, false, { names: new Map([[param.text, []]]), body: test, dir: undefined, accept, ctx }) ?? []));
  }
  return readdirItems(callee.expression, ctx, accept, depth + 1);
}

/** `__dirname`, `path.join(__dirname, 'routes')`, `new URL('./routes', import.meta.url)`: relative to the root. */
function directoryOf(expr: ts.Expression | undefined, ctx: FileContext): string | undefined {
  if (!expr) return undefined;
  const parts: string[] = [];
  const collect = (n: ts.Node): void => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateLiteralToken(n)) parts.push(n.text);
    // `const dir = path.join(…)`; `__dirname` (also the ESM one made from import.meta.url) is the module's folder.
    else if (ts.isIdentifier(n) && !/^__(dirname|filename)$/.test(n.text) && ctx.index.consts.has(n.text)) collect(ctx.index.consts.get(n.text)!);
    // path.join(…)'s arguments, not the `path` it is called on; `new URL('./routes', import.meta.url)`.
    else if (ts.isCallExpression(n) || ts.isNewExpression(n)) n.arguments?.forEach(collect);
    else if (ts.isBinaryExpression(n) || ts.isTemplateExpression(n) || ts.isTemplateSpan(n) || ts.isParenthesizedExpression(n)) ts.forEachChild(n, collect);
  };
  collect(expr);
  return path.posix.normalize(path.posix.join(path.posix.dirname(ctx.rel), ...parts.filter((p) => !p.startsWith('file:')))).replace(/\/$/, '');
}

/** The module a mount argument loads and the export it takes: `require(spec)`, `(await import(spec)).default`, a local bound to one. */
function loadedModule(expr: ts.Expression, loop: Loop, depth = 0): { spec: ts.Expression; member?: string } | undefined {
  const node = unwrap(expr);
  if (depth > 3) return undefined;
  if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require')) && node.arguments[0]) return { spec: node.arguments[0] };
  if (ts.isPropertyAccessExpression(node)) {
    const inner = loadedModule(node.expression, loop, depth + 1);
    return inner && !inner.member ? { spec: inner.spec, member: node.name.text } : undefined;
  }
  if (!ts.isIdentifier(node)) return undefined;
  const declaration = localDeclaration(node.text, loop.body);
  if (!declaration?.initializer) return undefined;
  if (ts.isIdentifier(declaration.name)) return loadedModule(declaration.initializer, loop, depth + 1);
  // `const { default: router } = await import(…)`, `const { router } = require(…)`.
  const element = ts.isObjectBindingPattern(declaration.name) ? declaration.name.elements.find((e) => ts.isIdentifier(e.name) && e.name.text === node.text) : undefined;
  const inner = element && loadedModule(declaration.initializer, loop, depth + 1);
  return inner && !inner.member ? { spec: inner.spec, member: propertyName(element.propertyName) ?? node.text } : undefined;
}

/** The declaration binding `name` in the loop body. */
function localDeclaration(name: string, body: ts.Node): ts.VariableDeclaration | undefined {
  let found: ts.VariableDeclaration | undefined;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (ts.isVariableDeclaration(n) && (ts.isIdentifier(n.name) ? n.name.text === name : ts.isObjectBindingPattern(n.name) && n.name.elements.some((e) => ts.isIdentifier(e.name) && e.name.text === name))) found = n;
    else ts.forEachChild(n, visit);
  };
  visit(body);
  return found;
}

/** A string made of literal text and the entry's name: `'/' + name`, `` `/${path.parse(f).name}` ``, `path.join(__dirname, 'routes', f)`. */
function partsOf(expr: ts.Expression, loop: Loop, depth = 0): FileNamePart[] | undefined {
  const node = unwrap(expr);
  if (depth > 4) return undefined;
  const literal = stringValue(node, loop.ctx.index.consts);
  if (literal !== undefined) return [literal];
  // The module's own directory: `__dirname`, `import.meta.dirname`.
  if ((ts.isIdentifier(node) && node.text === '__dirname') || (ts.isPropertyAccessExpression(node) && ts.isMetaProperty(node.expression) && node.name.text === 'dirname')) return ['./'];
  if (ts.isTemplateExpression(node)) {
    const out: FileNamePart[] = [node.head.text];
    for (const span of node.templateSpans) {
      const part = partsOf(span.expression, loop, depth + 1);
      if (!part) return undefined;
      out.push(...part, span.literal.text);
    }
    return out;
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = partsOf(node.left, loop, depth + 1);
    const right = partsOf(node.right, loop, depth + 1);
    return left && right ? [...left, ...right] : undefined;
  }
  // path.join / path.resolve of the directory and the entry: a module path, one segment per argument.
  if (ts.isCallExpression(node) && /^(join|resolve)$/.test(calleeName(node)) && node.arguments.length > 0) {
    const out: FileNamePart[] = [];
    for (const [i, arg] of node.arguments.entries()) {
      const part = partsOf(arg, loop, depth + 1);
      if (!part) return undefined;
      out.push(...(i > 0 ? ['/'] : []), ...part);
    }
    return out;
  }
  if (ts.isCallExpression(node) && calleeName(node) === 'pathToFileURL' && node.arguments[0]) return partsOf(node.arguments[0], loop, depth + 1);
  if (ts.isPropertyAccessExpression(node) && node.name.text === 'href') return partsOf(node.expression, loop, depth + 1);
  const ops = nameOps(node, loop, depth + 1);
  return ops ? [ops] : undefined;
}

const calleeName = (call: ts.CallExpression): string => (ts.isIdentifier(call.expression) ? call.expression.text : ts.isPropertyAccessExpression(call.expression) ? call.expression.name.text : '');

/** The entry's name through string steps: `file.replace(/\.js$/, '')`, `path.basename(file, '.ts')`, `file.split('.')[0]`. */
function nameOps(expr: ts.Expression, loop: Loop, depth = 0): FileNameOp[] | undefined {
  const node = unwrap(expr);
  if (depth > 6) return undefined;
  if (ts.isIdentifier(node)) {
    const known = loop.names.get(node.text);
    if (known) return known;
    const declaration = localDeclaration(node.text, loop.body);
    return declaration?.initializer && ts.isIdentifier(declaration.name) ? nameOps(declaration.initializer, loop, depth + 1) : undefined;
  }
  // file.split('.')[0]
  if (ts.isElementAccessExpression(node) && ts.isCallExpression(node.expression) && calleeName(node.expression) === 'split' && ts.isPropertyAccessExpression(node.expression.expression) && ts.isNumericLiteral(node.argumentExpression)) {
    const separator = stringValue(node.expression.arguments[0]);
    const base = nameOps(node.expression.expression.expression, loop, depth + 1);
    return base && separator !== undefined ? [...base, { split: separator, index: Number(node.argumentExpression.text) }] : undefined;
  }
  // path.parse(file).name
  if (ts.isPropertyAccessExpression(node) && node.name.text === 'name' && ts.isCallExpression(node.expression) && calleeName(node.expression) === 'parse' && node.expression.arguments[0]) {
    const base = nameOps(node.expression.arguments[0], loop, depth + 1);
    return base && [...base, { stem: true }];
  }
  if (!ts.isCallExpression(node)) return undefined;
  const name = calleeName(node);
  const [first, second] = node.arguments;
  if (/^(basename|extname)$/.test(name) && first) {
    const base = nameOps(first, loop, depth + 1);
    const ext = second ? stringValue(second) : '';
    return base && ext !== undefined ? [...base, name === 'basename' ? { basename: ext } : { extname: true }] : undefined;
  }
  if (!ts.isPropertyAccessExpression(node.expression)) return undefined;
  const base = nameOps(node.expression.expression, loop, depth + 1);
  if (!base) return undefined;
  if (name === 'toLowerCase') return [...base, { lower: true }];
  if (name === 'replace' && first && second && stringValue(second) !== undefined) {
    const pattern = ts.isRegularExpressionLiteral(first) ? regexOf(first) : stringValue(first) !== undefined ? { source: escapeRegExp(stringValue(first)!), flags: '' } : undefined;
    return pattern && [...base, { replace: pattern.source, flags: pattern.flags, with: stringValue(second)! }];
  }
  if (name === 'slice' && first) {
    const numbers = node.arguments.map(numberOf);
    return numbers.every((n) => n !== undefined) ? [...base, { slice: numbers as [number, number?] }] : undefined;
  }
  return undefined;
}

function numberOf(expr: ts.Expression): number | undefined {
  if (ts.isNumericLiteral(expr)) return Number(expr.text);
  return ts.isPrefixUnaryExpression(expr) && expr.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(expr.operand) ? -Number(expr.operand.text) : undefined;
}

function regexOf(literal: ts.RegularExpressionLiteral): { source: string; flags: string } {
  const text = literal.text;
  const end = text.lastIndexOf('/');
  return { source: text.slice(1, end), flags: text.slice(end + 1) };
}

const EQUALITY = new Set([ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken]);

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A condition on the entry's name as clauses that all hold (each when one of its tests does), `negated` for the
 * branch taken when it is false. Parts that are not tests of the name are left out: the loop may load more than this
 * says, never less.
 */
function clauses(expr: ts.Expression, negated: boolean, loop: Loop): FileNameTest[][] | undefined {
  const node = unwrap(expr);
  if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.ExclamationToken) return clauses(node.operand, !negated, loop);
  if (ts.isBinaryExpression(node) && (node.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken || node.operatorToken.kind === ts.SyntaxKind.BarBarToken)) {
    const left = clauses(node.left, negated, loop);
    const right = clauses(node.right, negated, loop);
    // `a && b` (or `!(a || b)`): both hold. `a || b` (or `!(a && b)`): one clause of both tests, when each side is one.
    if ((node.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken) !== negated) return [...(left ?? []), ...(right ?? [])];
    return left?.length === 1 && right?.length === 1 ? [[...left[0]!, ...right[0]!]] : undefined;
  }
  const one = (test: Omit<FileNameTest, 'negate'>, different = false): FileNameTest[][] => [[negated !== different ? { ...test, negate: true } : test]];
  if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) {
    const different = node.operatorToken.kind === ts.SyntaxKind.ExclamationEqualsEqualsToken || node.operatorToken.kind === ts.SyntaxKind.ExclamationEqualsToken;
    const [value, side] = stringValue(node.right) !== undefined ? [stringValue(node.right), node.left] : [stringValue(node.left), node.right];
    const name = value !== undefined ? nameOps(side, loop) : undefined;
    return name && value !== undefined ? one({ name, is: 'equals', value }, different) : undefined;
  }
  if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return undefined;
  const method = node.expression.name.text;
  const [first] = node.arguments;
  // ['index.js', 'health.js'].includes(file): one of the names.
  const list = unwrap(node.expression.expression);
  if (method === 'includes' && first && ts.isArrayLiteralExpression(list)) {
    const member = nameOps(first, loop);
    const values = list.elements.map((e) => stringValue(e, loop.ctx.index.consts));
    if (!member || values.some((v) => v === undefined)) return undefined;
    const tests = values.map((value) => ({ name: member, is: 'equals' as const, value: value! }));
    return negated ? tests.map((test) => [{ ...test, negate: true as const }]) : [tests];
  }
  if (/^(endsWith|startsWith|includes)$/.test(method) && first && stringValue(first) !== undefined) {
    const name = nameOps(node.expression.expression, loop);
    return name && one({ name, is: method as FileNameTest['is'], value: stringValue(first)! });
  }
  // /\.js$/.test(file), file.match(/\.js$/)
  const [pattern, subject] = method === 'test' ? [unwrap(node.expression.expression), first] : method === 'match' ? [first && unwrap(first), node.expression.expression] : [];
  if (pattern && subject && ts.isRegularExpressionLiteral(pattern)) {
    const name = nameOps(subject, loop);
    const { source, flags } = regexOf(pattern);
    return name ? one({ name, is: 'matches', value: source, ...(flags ? { flags } : {}) }) : undefined;
  }
  return undefined;
}
