import { objectLiteral } from '../houseStyle.js';
import { DEFAULT_CLASS } from '../profile/defaultClass.js';
import type { ModuleType } from './transpile.js';

/**
 * An ES module an emitter printed itself as house-style JavaScript, in the project's module format: as written for
 * 'module'; for 'commonjs', rewritten exactly as toCommonJs and then prettier would (the byte-identity test in
 * test/scaffold/directJavaScript.test.ts holds both to it), without loading either.
 *
 * Only for the emitters' own module skeleton: top-level `import { … } from '…';`, `export { … } from '…';` and
 * `export const|function|async function|class` lines at column 0. Values from a config reach the text only as
 * literals printed by houseLiteral/houseQuote, which never span lines, so they cannot look like such a line.
 */
export function printModule(esm: string, moduleType: ModuleType): string {
  if (moduleType === 'module') return esm;
  if (/\bimport\.meta\b|\bawait import\(/.test(esm)) throw new Error('bug: printModule has no CommonJS form for import.meta or await import()');
  const requires = new Map<string, { names: string[]; whole: string[]; line: number }>();
  const exported: string[] = [];
  const out: Array<string | { specifier: string }> = [];
  const lines = esm.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    let statement = lines[i]!;
    if (/^(import|export) \{$/.test(statement)) {
      // A specifier list prettier broke over lines: read it back to one statement.
      while (!lines[i]!.startsWith('}')) statement += ` ${lines[++i]!.trim()}`;
    }
    const named = /^(import|export) \{ ?([^}]*?),? ?\} from '([^'\\]+)';$/.exec(statement.replace(/\{ +/, '{ '));
    const whole = /^import (?:\* as )?([\w$]+) from '([^'\\]+)';$/.exec(statement);
    if (named || whole) {
      const specifier = named ? named[3]! : whole![2]!;
      let entry = requires.get(specifier);
      if (!entry) {
        entry = { names: [], whole: [], line: out.length };
        requires.set(specifier, entry);
        out.push({ specifier });
      }
      if (whole) entry.whole.push(whole[1]!);
      for (const part of named ? named[2]!.split(',').map((text) => text.trim()) : []) {
        // `import { a as b }` is `const { a: b } = require(…)`, as toCommonJs writes it.
        const alias = named![1] === 'import' ? /^([\w$]+) as ([\w$]+)$/.exec(part) : null;
        const name = alias ? `${alias[1]}: ${alias[2]}` : part;
        if (!alias && !/^[\w$]+$/.test(name)) throw new Error(`bug: printModule has no CommonJS form for: ${statement}`);
        if (!entry.names.includes(name)) entry.names.push(name);
        if (named![1] === 'export') exported.push(name);
      }
      continue;
    }
    const declaration = /^export ((?:async )?function\*? ([\w$]+)|(?:const|let|class) ([\w$]+))/.exec(statement);
    if (declaration) {
      exported.push(declaration[2] ?? declaration[3]!);
      out.push(statement.slice('export '.length));
      continue;
    }
    if (/^export\b/.test(statement)) throw new Error(`bug: printModule has no CommonJS form for: ${statement}`);
    out.push(statement);
  }
  const text = out
    .map((line) => {
      if (typeof line === 'string') return line;
      const entry = requires.get(line.specifier)!;
      const call = `require('${line.specifier}')`;
      // The class every release exports as the default (ioredis), read through `default` as toCommonJs does.
      const main = DEFAULT_CLASS[line.specifier];
      const names = entry.names.map((name) => (main !== undefined && (name === main || name.startsWith(`${main}: `)) ? `default: ${/([\w$]+)$/.exec(name)![1]}` : name));
      const parts = entry.whole.map((name) => `const ${name} = ${call};`);
      if (names.length > 0) parts.push(objectLiteral('', 'const ', names, ` = ${call};`));
      return parts.length > 0 ? parts.join('\n') : `${call};`;
    })
    .join('\n');
  const header = /^(?:\/\/.*\n)*/.exec(text)?.[0] ?? '';
  const body = text.slice(header.length).replace(/^\n+/, '').trimEnd();
  const exports = exported.length > 0 ? `\n\n${objectLiteral('', 'module.exports = ', exported, ';')}` : '';
  return `${header}'use strict';\n\n${body}${exports}\n`;
}

/**
 * A README code block's JavaScript, printed by its emitter without types, in the form the old path gave it
 * (transpiled as a snippet): a block with no import is a script, which the compiler opens with "use strict"; in a
 * CommonJS project imports become require() calls and exports a module.exports (no 'use strict' of its own).
 */
export function printSnippet(code: string, moduleType: ModuleType): string {
  const lines = code.trimEnd().split('\n');
  if (!lines.some((line) => /^(import|export)\b/.test(line))) return `"use strict";\n${lines.join('\n')}\n`;
  if (moduleType === 'module') return `${lines.join('\n')}\n`;
  const exported: string[] = [];
  const required = lines.map((line) => {
    const declaration = /^export ((?:async )?function ([\w$]+)|(?:const|let|class) ([\w$]+))/.exec(line);
    if (declaration) {
      const name = declaration[2] ?? declaration[3]!;
      if (!exported.includes(name)) exported.push(name);
      return line.slice('export '.length);
    }
    const named = /^import \{ ([^}]*) \} from '([^'\\]+)';$/.exec(line);
    if (named) return `const { ${named[1]} } = require('${named[2]}');`;
    const whole = /^import ([\w$]+) from '([^'\\]+)';$/.exec(line);
    if (whole) return `const ${whole[1]} = require('${whole[2]}');`;
    if (/^(import|export)\b/.test(line)) throw new Error(`bug: printSnippet has no CommonJS form for: ${line}`);
    return line;
  });
  // As toCommonJs writes it; README blocks are not formatted, so the list stays on one line.
  const exports = exported.length > 0 ? `\n\nmodule.exports = { ${exported.join(', ')} };` : '';
  return `${required.join('\n')}${exports}\n`;
}
