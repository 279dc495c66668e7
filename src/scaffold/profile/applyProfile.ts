import type * as TsMorph from 'ts-morph';
import { loadTypeScript } from '../javascript/transpile.js';
import type { ScaffoldFile } from '../types.js';
import type { ProjectProfile } from './types.js';

type Ts = typeof TsMorph.ts;
type Node = TsMorph.ts.Node;

interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * Adapts the targets' TypeScript (written for Node ESM: `./x.js` specifiers, default imports of CommonJS packages)
 * to the project's profile: extensionless relative imports for bundler/CommonJS resolution, and `import x =
 * require('m')` where a default import would read `m_1.default` (CommonJS without esModuleInterop). Runs after the
 * targets (and after toJavaScriptFiles for JavaScript, which needs none of this), so templates stay one source.
 */
export function applyProfile(files: readonly ScaffoldFile[], profile: ProjectProfile): ScaffoldFile[] {
  if (profile.language !== 'typescript') return [...files];
  return files.map((file) => {
    if (file.path.endsWith('.ts')) {
      const contents = adaptSource(file.contents, profile, file.path);
      return contents === file.contents ? file : { ...file, contents, formatted: false };
    }
    if (file.role === 'readme') {
      const contents = file.contents.replace(/```ts\n([\s\S]*?)```/g, (_block, code: string) => `\`\`\`ts\n${adaptSource(code, profile, 'README.ts')}\`\`\``);
      return contents === file.contents ? file : { ...file, contents };
    }
    return file;
  });
}

/** One TypeScript source adapted to the profile; unchanged for the reference profile (Node ESM with interop). */
export function adaptSource(code: string, profile: ProjectProfile, fileName = 'module.ts'): string {
  const ts = loadTypeScript();
  const file = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const edits: Edit[] = [];
  const specifier = (literal: TsMorph.ts.StringLiteral) => {
    if (profile.relativeImports === 'extensionless' && /^\.\.?\//.test(literal.text) && literal.text.endsWith('.js')) {
      edits.push({ start: literal.getStart() + 1, end: literal.end - 1, text: literal.text.slice(0, -3) });
    }
  };
  for (const statement of file.statements) {
    if ((ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      specifier(statement.moduleSpecifier);
      if (ts.isImportDeclaration(statement) && !profile.defaultImportInterop) {
        const edit = defaultImportEdit(ts, statement, profile);
        if (edit) edits.push(edit);
      }
    }
  }
  const visit = (node: Node): void => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) specifier(argument);
    }
    if (profile.moduleSystem === 'commonjs' && ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword) {
      const { line } = file.getLineAndCharacterOfPosition(node.getStart());
      throw new Error(`bug: generated ${fileName}:${line + 1} uses import.meta, which a CommonJS project cannot compile`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  let out = code;
  for (const edit of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

/**
 * `import pg from 'pg'` without interop: `import pg = require('pg')` in CommonJS output (the binding is the module
 * itself, as `require` returns it), `import * as pg from 'pg'` in ES module output. Named imports beside the default
 * move to their own statement.
 */
function defaultImportEdit(ts: Ts, statement: TsMorph.ts.ImportDeclaration, profile: ProjectProfile): Edit | undefined {
  const clause = statement.importClause;
  const moduleName = (statement.moduleSpecifier as TsMorph.ts.StringLiteral).text;
  if (!clause?.name || clause.isTypeOnly || /^\.\.?\//.test(moduleName) || moduleName.startsWith('node:')) return undefined;
  const quoted = statement.moduleSpecifier.getText();
  const local = clause.name.text;
  const lines = [profile.moduleSystem === 'commonjs' ? `import ${local} = require(${quoted});` : `import * as ${local} from ${quoted};`];
  if (clause.namedBindings) lines.push(`import ${clause.namedBindings.getText()} from ${quoted};`);
  return { start: statement.getStart(), end: statement.end, text: lines.join('\n') };
}
