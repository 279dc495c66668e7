import { createRequire } from 'node:module';
import type * as TsMorph from 'ts-morph';
import { JSDOC_MARK, jsdocTransformer } from './jsdoc.js';
import { requireRelativeImports, toCommonJs } from './toCommonJs.js';

export type ModuleType = 'module' | 'commonjs';
type Ts = typeof TsMorph.ts;

// A blank line travels through the emitter as a comment (the emitter drops blank lines but keeps comments), then
// turns back into a blank line, so the JavaScript keeps the paragraphs of the TypeScript it came from.
const BLANK = '/*__idempotency_builder_blank__*/';
const BLANK_LINE = /^[ \t]*\/\*__idempotency_builder_blank__\*\/[ \t]*$/gm;
const BLANK_ANYWHERE = /[ \t]*\/\*__idempotency_builder_blank__\*\/[ \t]*/g;

let loaded: Ts | undefined;

/**
 * TypeScript, loaded only when a JavaScript project needs it: the copy ts-morph (a runtime dependency) bundles, read
 * straight from its @ts-morph/common without evaluating ts-morph itself (a sixth of the load, unused here). Resolved
 * from ts-morph's own folder, so it is the same module (and the same `ts`) ts-morph uses wherever npm put it.
 */
export function loadTypeScript(): Ts {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  try {
    loaded = createRequire(require.resolve('ts-morph'))('@ts-morph/common/dist/typescript.js') as Ts;
  } catch {
    // A ts-morph that lays out @ts-morph/common differently: through its public entry, as before.
    loaded = (require('ts-morph') as typeof TsMorph).ts;
  }
  return loaded;
}

/**
 * Strips the types from one generated TypeScript file, keeping its comments and blank lines. The result still
 * wants prettier (the emitter indents by four and splits `if (x) return y;`), which generate runs on every file.
 * `module` keeps the import/export syntax; `commonjs` rewrites it to require() and module.exports. A `snippet` (a
 * README example, not a file) gets no 'use strict'.
 */
export function transpileToJavaScript(source: string, moduleType: ModuleType, fileName = 'module.ts', options: { snippet?: boolean } = {}): string {
  // generate asks for each file twice (the scaffold, then the document's excerpts of it): transpile it once.
  const key = `${moduleType}\0${fileName}\0${options.snippet ? 1 : 0}\0${source}`;
  let code = transpiled.get(key);
  if (code === undefined) {
    code = transpile(source, moduleType, fileName, options);
    if (transpiled.size >= 500) transpiled.clear();
    transpiled.set(key, code);
  }
  return code;
}

const transpiled = new Map<string, string>();

/** The opening comment of a vitest suite in a CommonJS project (suiteJavaScript.ts prints it too). */
export const SUITE_NOTE = `// An ES module even in this CommonJS project: vitest cannot be loaded with require(). The files under test are
// loaded with require(), as the application loads them, so there is one copy of each (and instanceof holds).
`;

/**
 * A vitest suite (or the store contract it runs) as JavaScript: an ES module in every project, since vitest refuses
 * to be require()d; in a CommonJS project its imports of the project's own files become require() calls.
 */
export function transpileSuiteToJavaScript(source: string, moduleType: ModuleType, fileName: string): string {
  const code = transpileToJavaScript(source, 'module', fileName);
  return moduleType === 'commonjs' ? SUITE_NOTE + requireRelativeImports(loadTypeScript(), code, fileName) : code;
}

function transpile(source: string, moduleType: ModuleType, fileName: string, options: { snippet?: boolean }): string {
  const ts = loadTypeScript();
  const marked = source.replace(/^[ \t]*$/gm, (_line, offset: number) => (offset === source.length ? '' : BLANK));
  const { outputText, diagnostics } = ts.transpileModule(marked, {
    fileName,
    reportDiagnostics: true,
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      removeComments: false,
      newLine: ts.NewLineKind.LineFeed,
      useDefineForClassFields: true,
    },
    // A README example stays plain JavaScript; files keep their types as JSDoc (jsdoc.ts).
    transformers: options.snippet ? {} : { before: [jsdocTransformer(ts)] },
  });
  const errors = (diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) {
    const message = errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ');
    throw new Error(`bug: generated ${fileName} does not transpile: ${message}`);
  }
  let esm = tidy(mergeJsDoc(outputText.replace(/^export \{\};\n?/m, '')));
  // A file's opening comment (set off by a blank line) leaves with the type it happened to precede; keep it.
  const header = /^(?:(?:\/\/[^\n]*\n)+|\/\*[\s\S]*?\*\/\n)(?=\n)/.exec(source)?.[0];
  if (header && !esm.startsWith(header)) esm = `${header}\n${esm}`;
  const code = moduleType === 'commonjs' ? toCommonJs(ts, esm, fileName, { strict: !options.snippet }) : esm;
  return tidy(code);
}

// A doc comment, then (on the next line) the types jsdocTransformer wrote for the same declaration.
const DOC_THEN_TAGS = /\/\*\*(?!@__jsdoc__)((?:(?!\*\/)[^])*)\*\/[ \t]*\n([ \t]*)\/\*\*@__jsdoc__((?:(?!\*\/)[^])*)\*\//g;

/** A comment's lines without their `/**`, ` * ` and `*\/`, blank ones at either end dropped. */
const commentLines = (body: string): string[] => {
  const lines = body.split('\n').map((line) => line.replace(/^[ \t]*\*? ?/, '').trimEnd());
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop();
  return lines;
};

/**
 * The types jsdocTransformer wrote, folded into the doc comment right above them (one comment per declaration, as
 * a person writes it), the mark removed from the rest. Prettier indents the result.
 */
function mergeJsDoc(text: string): string {
  const merged = text.replace(DOC_THEN_TAGS, (_match, doc: string, indent: string, tags: string) => {
    const lines = [...commentLines(doc), '', ...commentLines(tags)];
    return `/**\n${lines.map((line) => `${indent} *${line ? ` ${line}` : ''}`).join('\n')}\n${indent} */`;
  });
  return merged.replace(new RegExp(`/\\*${JSDOC_MARK.replace(/\*/g, '\\*')}`, 'g'), '/**');
}

/** Markers back to blank lines (prettier later folds runs of them, outside strings only), one newline at the end. */
function tidy(text: string): string {
  return `${text.replace(BLANK_LINE, '').replace(BLANK_ANYWHERE, '').replace(/^\n+/, '').trimEnd()}\n`;
}

/**
 * JavaScript re-emitted at an older syntax level (`target`, an ES year), keeping its comments and blank lines: for a
 * project whose toolchain parses nothing newer (jestBabel6). Module syntax and require() stay as they are. The
 * result wants prettier, as transpileToJavaScript's does.
 */
export function lowerJavaScript(code: string, fileName: string, target: 2017 | 2018): string {
  const ts = loadTypeScript();
  const marked = code.replace(/^[ \t]*$/gm, (_line, offset: number) => (offset === code.length ? '' : BLANK));
  const { outputText, diagnostics } = ts.transpileModule(marked, {
    fileName: fileName.replace(/\.[cm]?js$/, '.js'),
    reportDiagnostics: true,
    compilerOptions: {
      allowJs: true,
      target: target === 2017 ? ts.ScriptTarget.ES2017 : ts.ScriptTarget.ES2018,
      module: ts.ModuleKind.ESNext,
      removeComments: false,
      newLine: ts.NewLineKind.LineFeed,
      useDefineForClassFields: true,
    },
  });
  const errors = (diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) {
    const message = errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ');
    throw new Error(`bug: generated ${fileName} does not transpile to ES${target}: ${message}`);
  }
  return tidy(outputText);
}
