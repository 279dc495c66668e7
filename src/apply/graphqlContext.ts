import { ts } from 'ts-morph';
import { projectFile, projectFiles } from './projectScan.js';

/** The calls that take an Apollo Server context function as `{ context }`: standalone and the Express integrations. */
const CONTEXT_TAKERS = new Set(['startStandaloneServer', 'expressMiddleware']);

const unwrap = (node: ts.Expression): ts.Expression => (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node) ? unwrap(node.expression) : node);

/** The function a `context` option names: inline, a method, or a function / const of the same file. */
function contextFunction(option: ts.ObjectLiteralElementLike, sf: ts.SourceFile): ts.SignatureDeclaration | undefined {
  if (ts.isMethodDeclaration(option)) return option;
  const value = ts.isPropertyAssignment(option) ? unwrap(option.initializer) : ts.isShorthandPropertyAssignment(option) ? option.name : undefined;
  if (!value) return undefined;
  if (ts.isArrowFunction(value) || ts.isFunctionExpression(value)) return value;
  if (!ts.isIdentifier(value)) return undefined;
  for (const statement of sf.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name?.text === value.text) return statement;
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      const init = declaration.initializer && unwrap(declaration.initializer);
      if (ts.isIdentifier(declaration.name) && declaration.name.text === value.text && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) return init;
    }
  }
  return undefined;
}

/** How the request is spelled inside the context function: `req` from `({ req })` / `({ req: request })`, or `args.req`. */
function requestReads(fn: ts.SignatureDeclaration): (node: ts.Expression) => boolean {
  const param = fn.parameters[0];
  if (!param) return () => false;
  if (ts.isObjectBindingPattern(param.name)) {
    const element = param.name.elements.find((e) => ((e.propertyName && ts.isIdentifier(e.propertyName) ? e.propertyName.text : ts.isIdentifier(e.name) ? e.name.text : '') === 'req') && ts.isIdentifier(e.name));
    const local = element && ts.isIdentifier(element.name) ? element.name.text : undefined;
    return (node) => local !== undefined && ts.isIdentifier(node) && node.text === local;
  }
  const name = ts.isIdentifier(param.name) ? param.name.text : undefined;
  return (node) => name !== undefined && ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === name && node.name.text === 'req';
}

/** What the function returns: the expression body, or every `return` of its own block. */
function returned(fn: ts.SignatureDeclaration): ts.Expression[] | undefined {
  const body = (fn as { body?: ts.Node }).body;
  if (!body) return undefined;
  if (!ts.isBlock(body)) return [unwrap(body as ts.Expression)];
  const out: ts.Expression[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node)) return;
    if (ts.isReturnStatement(node) && node.expression) out.push(unwrap(node.expression));
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(body, visit);
  return out.length > 0 ? out : undefined;
}

/**
 * The property of an Apollo Server context that holds the Node request, as the file's context function builds it:
 * `context: async ({ req }) => ({ req, user })` gives 'req'; `({ req }) => ({ request: req })` gives 'request'.
 * Undefined when the file has no such function, or it returns anything apply cannot read (a built object, a spread,
 * two returns that disagree).
 */
export function requestPropertyIn(file: string, text: string): string | undefined {
  if (!/\b(startStandaloneServer|expressMiddleware)\b/.test(text)) return undefined;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, /\.[cm]?tsx?$/.test(file) ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const found = new Set<string | undefined>();
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && CONTEXT_TAKERS.has(node.expression.text)) {
      const options = node.arguments[1] && unwrap(node.arguments[1]);
      const option = options && ts.isObjectLiteralExpression(options) ? options.properties.find((p) => p.name !== undefined && ts.isIdentifier(p.name) && p.name.text === 'context') : undefined;
      const fn = option && contextFunction(option, sf);
      if (fn) found.add(propertyOf(fn));
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found.size === 1 ? [...found][0] : undefined;
}

function propertyOf(fn: ts.SignatureDeclaration): string | undefined {
  const isRequest = requestReads(fn);
  const names = new Set<string | undefined>();
  for (const value of returned(fn) ?? []) {
    if (!ts.isObjectLiteralExpression(value)) return undefined;
    const property = value.properties.find((p) => (ts.isShorthandPropertyAssignment(p) && isRequest(p.name)) || (ts.isPropertyAssignment(p) && isRequest(unwrap(p.initializer))));
    names.add(property && property.name && ts.isIdentifier(property.name) ? property.name.text : undefined);
  }
  return names.size === 1 ? [...names][0] : undefined;
}

/** The request's property in the project's Apollo Server context, when every context function found agrees on one. */
export async function apolloRequestProperty(root: string): Promise<string | undefined> {
  const { files } = await projectFiles(root);
  const found = new Set<string | undefined>();
  for (const file of files) {
    if (!/\.(m|c)?[jt]sx?$/.test(file.rel)) continue;
    const text = (await projectFile(root, file.rel)) ?? '';
    if (/\b(startStandaloneServer|expressMiddleware)\s*\(/.test(text)) found.add(requestPropertyIn(file.rel, text));
  }
  return found.size === 1 ? [...found][0] : undefined;
}
