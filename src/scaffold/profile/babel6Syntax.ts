import type * as TsMorph from 'ts-morph';
import { loadTypeScript, lowerJavaScript } from '../javascript/transpile.js';
import type { ScaffoldFile } from '../types.js';

type Ts = typeof TsMorph.ts;

/**
 * Jest before 24 runs every file through babel-jest 23 and Babel 6, whose parser (babylon 6) stops at ES2017 plus
 * object rest/spread (babel-preset-jest adds that syntax): `30_000`, `a?.b`, `a ?? b`, class fields and `catch {`
 * are syntax errors there, and `for await` is one without a plugin. Each JavaScript file holding such syntax is
 * re-emitted by the TypeScript compiler at ES2018 (ES2017 when it iterates asynchronously); the rest are untouched.
 * Node runs either. Re-emitted files go through prettier again (formatted: false).
 */
export function toBabel6Syntax(files: readonly ScaffoldFile[]): ScaffoldFile[] {
  return files.map((file) => {
    if (!/\.[cm]?js$/.test(file.path)) return file;
    const contents = lowerToBabel6(file.contents, file.path);
    return contents === file.contents ? file : { ...file, contents, formatted: false };
  });
}

/** One JavaScript file at the syntax level Babel 6 parses: the same text when it already does. */
export function lowerToBabel6(code: string, fileName: string): string {
  const target = neededTarget(loadTypeScript(), fileName, code);
  return target === undefined ? code : lowerJavaScript(code, fileName, target);
}

/** The newest ES year Babel 6 parses that this file can be lowered to; undefined when it parses as it is. */
function neededTarget(ts: Ts, fileName: string, code: string): 2017 | 2018 | undefined {
  const source = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  let target: 2017 | 2018 | undefined;
  const visit = (node: TsMorph.ts.Node): void => {
    if (target === 2017) return;
    if (asyncIteration(ts, node)) target = 2017;
    else if (target === undefined && newerThanBabel6(ts, source, node)) target = 2018;
    ts.forEachChild(node, visit);
  };
  visit(source);
  return target;
}

/** `for await` and async generators: ES2018, outside what babylon 6 parses unless a plugin asks. */
function asyncIteration(ts: Ts, node: TsMorph.ts.Node): boolean {
  if (ts.isForOfStatement(node) && node.awaitModifier !== undefined) return true;
  if ((ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isMethodDeclaration(node)) && node.asteriskToken) {
    return ts.getModifiers(node)?.some((modifier) => modifier.kind === ts.SyntaxKind.AsyncKeyword) === true;
  }
  return false;
}

/** Syntax from ES2019 on (and class fields): what the compiler lowers at ES2018. */
function newerThanBabel6(ts: Ts, source: TsMorph.ts.SourceFile, node: TsMorph.ts.Node): boolean {
  if (ts.isNumericLiteral(node)) return node.getText(source).includes('_');
  if (ts.isCatchClause(node)) return node.variableDeclaration === undefined;
  if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node) || ts.isCallExpression(node)) return node.questionDotToken !== undefined;
  if (ts.isBinaryExpression(node)) {
    const operator = node.operatorToken.kind;
    const { QuestionQuestionToken, QuestionQuestionEqualsToken, BarBarEqualsToken, AmpersandAmpersandEqualsToken } = ts.SyntaxKind;
    return operator === QuestionQuestionToken || operator === QuestionQuestionEqualsToken || operator === BarBarEqualsToken || operator === AmpersandAmpersandEqualsToken;
  }
  return ts.isPropertyDeclaration(node) || ts.isClassStaticBlockDeclaration(node) || ts.isPrivateIdentifier(node);
}
