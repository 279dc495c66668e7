import path from 'node:path';
import type * as TsMorph from 'ts-morph';
import type { ScaffoldFile } from '../types.js';
import type { ProjectProfile } from './types.js';

type Ts = typeof TsMorph.ts;

/** The file, at the scaffold's root, that puts Node's own encoders on the sandbox's global. */
export const SANDBOX_ENCODING_FILE = 'jest-sandbox';

const WHY = `// Jest before 24.3 leaves TextEncoder and TextDecoder out of its test sandbox, and pg reads TextEncoder as
// it loads: every suite imports this file first, so Node's own are on the sandbox's global before pg is loaded.`;

const PURPOSE = 'puts TextEncoder and TextDecoder in the Jest sandbox (before 24.3 it has none; pg needs them), imported first by every suite';

function encodingSource(language: ProjectProfile['language'], style: 'import' | 'require', util: string): string {
  const load = style === 'import' ? `import { TextDecoder, TextEncoder } from '${util}';` : `const { TextDecoder, TextEncoder } = require('${util}');`;
  const global = language === 'typescript' ? 'globalThis as unknown as { TextEncoder?: unknown; TextDecoder?: unknown }' : 'globalThis';
  const strict = style === 'require' ? `'use strict';\n\n` : '';
  return `${WHY}\n${strict}${load}\n\nconst sandbox = ${global};\nif (sandbox.TextEncoder === undefined) sandbox.TextEncoder = TextEncoder;\nif (sandbox.TextDecoder === undefined) sandbox.TextDecoder = TextDecoder;\n`;
}

/**
 * Adds the encoding file and makes it the first import of every Jest suite (ahead of anything that may load pg;
 * imports run in source order, statements between them could be hoisted past). `style` is how the files import.
 */
export function withSandboxEncoding(ts: Ts, files: readonly ScaffoldFile[], profile: ProjectProfile, style: 'import' | 'require'): ScaffoldFile[] {
  const suites = files.filter((file) => file.role === 'tests' && /\.(test|spec)\.[cm]?[jt]s$/.test(file.path));
  if (suites.length === 0) return [...files];
  const javascript = profile.language === 'javascript';
  const extension = javascript ? '.js' : '.ts';
  const helper: ScaffoldFile = {
    path: `${SANDBOX_ENCODING_FILE}${extension}`,
    contents: encodingSource(profile.language, style, profile.bareBuiltins ? 'util' : 'node:util'),
    class: 'scaffold',
    role: 'tests',
    formatted: false,
  };
  const specifierFrom = (suite: string) => {
    const relative = path.posix.relative(path.posix.dirname(suite), SANDBOX_ENCODING_FILE);
    const prefixed = relative.startsWith('.') ? relative : `./${relative}`;
    return profile.relativeImports === 'js-extension' ? `${prefixed}.js` : prefixed;
  };
  const adapted = files.map((file) => {
    if (!suites.includes(file)) return file;
    const specifier = specifierFrom(file.path);
    const line = style === 'import' ? `import '${specifier}';\n` : `require('${specifier}');\n`;
    const at = firstImport(ts, file);
    return { ...file, contents: `${file.contents.slice(0, at)}${line}${file.contents.slice(at)}`, formatted: false };
  });
  return [...adapted.map((file) => (file.role === 'readme' && file.path === 'README.md' ? withFileListed(file, helper.path) : file)), helper];
}

/** The README's "## Files" list names the file too, where it sorts. */
function withFileListed(readme: ScaffoldFile, name: string): ScaffoldFile {
  const list = /## Files\n\n((?:- `[^`]+`: .*\n)+)/.exec(readme.contents);
  if (!list) return readme;
  const lines = list[1]!.split('\n').filter((line) => line !== '');
  const entry = `- \`${name}\`: ${PURPOSE}`;
  const at = lines.findIndex((line) => line.slice(3) > name);
  lines.splice(at === -1 ? lines.length : at, 0, entry);
  const start = list.index + '## Files\n\n'.length;
  return { ...readme, contents: `${readme.contents.slice(0, start)}${lines.join('\n')}\n${readme.contents.slice(start + list[1]!.length)}` };
}

/** Where the file's first import (or top-level require) starts, past its leading comments; else after its directives. */
function firstImport(ts: Ts, file: ScaffoldFile): number {
  const source = ts.createSourceFile(file.path, file.contents, ts.ScriptTarget.Latest, true, /\.[cm]?js$/.test(file.path) ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  let after = 0;
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) || ts.isImportEqualsDeclaration(statement) || /^(const|let|var)\b[^=]*=\s*require\(/.test(statement.getText(source))) return statement.getStart(source);
    if (ts.isExpressionStatement(statement) && ts.isStringLiteral(statement.expression)) after = statement.end + 1;
    else break;
  }
  return Math.min(after, file.contents.length);
}
