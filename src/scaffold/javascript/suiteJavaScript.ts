import { posix } from 'node:path';
import { HOUSE_WIDTH, namedList, objectLiteral } from '../houseStyle.js';
import { adaptSuite } from '../profile/runnerPrelude.js';
import type { TestRunner } from '../profile/types.js';
import type { SuiteHoles } from '../renderTests.js';
import type { JavaScriptToFormat } from '../types.js';
import { quote } from '../tsLiteral.js';
import { precompiledSuiteJavaScript, type PrecompiledForm } from './precompiled.js';
import { printModule } from './printModule.js';
import { SUITE_NOTE, type ModuleType } from './transpile.js';

/**
 * A rendered test suite (idempotency.test.ts) as JavaScript without the compiler or prettier: byte for byte what
 * transpiling and formatting it gives (test/scaffold/directJavaScript.test.ts), from pieces the build made.
 *
 * The suite is rendered once more with holes (SuiteHoles): every value from the design becomes a two-character
 * placeholder and mark lines set apart the fragments that vary with something else than the store and runner (the
 * framework's). What lies between two marks is then the same text for every design, so the build transpiles and
 * formats a few suites covering every store, framework, runner and module format (renderedSuites.ts) and keeps each
 * piece's JavaScript, keyed by its TypeScript (precompiled.ts). Here the pieces are looked up, the imports printed
 * (they depend on the whole mix), and the values put back. Any piece the build did not make, or a value whose
 * length could change prettier's layout, gives undefined: the suite is then transpiled as before.
 */

/** A mark line's statement; never in a template, and a statement, so the compiler and prettier keep it on its line. */
export const SUITE_MARK = 'ЖЖ;';
const MARK_LINE = /^[ \t]*ЖЖ;\n/gm;
const PLACEHOLDER = /[жЖ][a-zA-Z]/;
const PLACEHOLDERS = /[жЖ][a-zA-Z]/g;

/** Records the design's values and hands out their placeholders: `ж` + the hole's letter (upper-cased, `Ж` + it). */
export class SuiteHoleRecorder implements SuiteHoles {
  readonly values = new Map<string, string>();
  readonly mark = `${SUITE_MARK}\n`;

  // An arrow, so renderTests may take it out of the object.
  readonly hole = (name: string, value: string): string => {
    if (!/^[a-z]$/.test(name)) throw new Error(`bug: a suite hole is named by one lower-case letter, not ${name}`);
    const placeholder = `ж${name}`;
    const known = this.values.get(placeholder);
    if (known !== undefined && known !== value) throw new Error(`bug: suite hole ${name} holds two values`);
    this.values.set(placeholder, value);
    // A fragment may print the value upper-cased (NestJS's RequestMethod.POST).
    this.values.set(placeholder.toUpperCase(), value.toUpperCase());
    return placeholder;
  };
}

/**
 * A suite written for vitest (a template, the store contract) adapted to another runner (adaptSuite), as JavaScript:
 * precompiled whole by the build with the scaffold folder a hole (Mocha and node:test read .sql files from the
 * source folder, named in the suite). Undefined when the build did not make it or the folder does not fit.
 */
export function printAdaptedSuite(code: string, runner: TestRunner, path: string, scaffoldDir: string | undefined, moduleType: ModuleType): string | JavaScriptToFormat | undefined {
  const holes = new SuiteHoleRecorder();
  const js = precompiledSuiteJavaScript(adaptedSuiteSource(code, runner, path, scaffoldDir, holes), moduleType, runner, 'file');
  return js === undefined ? undefined : fillHolesOrFormat(js, holes.values);
}

/** adaptSuite for the suite at `path` in the scaffold folder; with holes, the folder is one when it is a plain path. */
export function adaptedSuiteSource(code: string, runner: TestRunner, path: string, scaffoldDir: string | undefined, holes?: SuiteHoles): string {
  const plain = scaffoldDir !== undefined && /^[\w@+-][\w./@+-]*$/.test(scaffoldDir) && posix.normalize(scaffoldDir) === scaffoldDir && !scaffoldDir.split('/').includes('..');
  const dir = holes && plain ? holes.hole('p', scaffoldDir) : scaffoldDir;
  return adaptSuite(code, runner, dir ? { sourceDir: posix.dirname(posix.join(dir, path)) } : undefined);
}

/** The suite's text between marks; the first piece is its imports. */
export const suitePieces = (source: string): string[] => source.split(MARK_LINE);

/** The source without its marks: the suite as rendered, placeholders aside. */
export const withoutMarks = (source: string): string => source.replace(MARK_LINE, '');

/** How the project loads a suite: vitest's are ES modules in every project; other runners load the project's format. */
export const suiteForm = (runner: string): PrecompiledForm => (runner === 'vitest' ? 'suite' : 'file');

/**
 * The precompiled table keys a piece by its text, the runner (Mocha's suite callback carries a JSDoc tag, so prettier
 * indents the whole suite one step more) and the module format, apart from whole templates.
 */
export const pieceSource = (piece: string, runner: string): string => `${SUITE_MARK} ${runner}\n${piece}`;

/**
 * The suite's JavaScript from its source with holes (rendered with a SuiteHoleRecorder), or undefined when a piece
 * was not precompiled or a value does not fit where its placeholder stood.
 */
export function printSuiteJavaScript(source: string, values: ReadonlyMap<string, string>, moduleType: ModuleType, runner: string): string | JavaScriptToFormat | undefined {
  const form = suiteForm(runner);
  const [imports, ...pieces] = suitePieces(source);
  const body: string[] = [];
  for (const piece of pieces) {
    const js = precompiledSuiteJavaScript(pieceSource(piece, runner), moduleType, runner, form);
    if (js === undefined) return undefined;
    body.push(js);
  }
  const code = body.join('');
  const header = printSuiteImports(imports!, code, moduleType, form);
  return header === undefined ? undefined : fillHolesOrFormat(header + code, values);
}

/**
 * fillHoles, or where a value leaves a line too long, the filled text for prettier to lay out: the same JavaScript
 * the compiler gives, in a layout prettier may change around that value (test/scaffold/directJavaScript.test.ts).
 */
export function fillHolesOrFormat(code: string, values: ReadonlyMap<string, string>): string | JavaScriptToFormat | undefined {
  const fitted = fillHoles(code, values);
  if (fitted !== undefined) return fitted;
  const loose = fillHoles(code, values, { overflow: true });
  return loose === undefined ? undefined : { toFormat: loose };
}

/**
 * The values back in place of their placeholders. Each placeholder is at most as long as its value, so a line that
 * prettier broke around the placeholder is broken the same way around the value; a line the value makes too long
 * might be broken differently, so that gives undefined (comments excepted: prettier never wraps them; and a line
 * already too long with the placeholder, which prettier could not break).
 */
export function fillHoles(code: string, values: ReadonlyMap<string, string>, options: { overflow?: boolean } = {}): string | undefined {
  const out: string[] = [];
  for (const line of code.split('\n')) {
    if (!PLACEHOLDER.test(line)) {
      out.push(line);
      continue;
    }
    let fits = true;
    // One pass, so a value is never read for placeholders itself.
    const filled = line.replace(PLACEHOLDERS, (placeholder) => {
      const value = values.get(placeholder);
      if (value === undefined || value.length < placeholder.length) fits = false;
      return value ?? placeholder;
    });
    // A line prettier left too long even with the placeholder (code inside a template literal) it leaves as it is.
    const unbreakable = /^\s*(\/\/|\/?\*)/.test(line) || line.length > HOUSE_WIDTH;
    if (!fits || (!unbreakable && !options.overflow && filled.split('\n').some((part) => part.length > HOUSE_WIDTH))) return undefined;
    out.push(filled);
  }
  return out.join('\n');
}

interface ImportStatement {
  from: string;
  /** `import x from`, `import * as x from`: the local name. */
  whole?: { name: string; namespace: boolean };
  /** Named specifiers as written (`a`, `a as b`), types left out. */
  names: string[];
}

/**
 * The suite's import lines as the compiler and prettier leave them: type-only imports and specifiers dropped, value
 * imports the code never uses dropped (as the compiler elides them), and in a CommonJS project either every import
 * a require() (other runners) or the project's own files required through createRequire (vitest, which stays an ES
 * module: transpile.ts). Undefined for an import form this does not know.
 */
export function printSuiteImports(source: string, code: string, moduleType: ModuleType, form: PrecompiledForm): string | undefined {
  const used = usedNames(code);
  const lines: Array<string | ImportStatement> = [];
  const raw = source.split('\n');
  for (let i = 0; i < raw.length; i += 1) {
    let line = raw[i]!;
    if (!line.startsWith('import')) {
      lines.push(line);
      continue;
    }
    while (!line.endsWith(';') && i + 1 < raw.length) line += ` ${raw[++i]!.trim()}`;
    if (/^import type\b/.test(line)) continue;
    const parts = /^import (?:(\* as )?([\w$]+))?(?:, )?(?:\{ ?([^}]*?),? ?\})? from '([^'\\]+)';$/.exec(line);
    if (!parts || (parts[2] === undefined && parts[3] === undefined)) return undefined;
    const names = (parts[3] ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '' && !name.startsWith('type '))
      .filter((name) => used.has(name.split(/\s+as\s+/).at(-1)!));
    const whole = parts[2] !== undefined && used.has(parts[2]) ? { name: parts[2], namespace: parts[1] !== undefined } : undefined;
    // Both a default and names from one module: a form printModule and the suites' CommonJS rewrite do not print.
    if (whole && names.length > 0 && moduleType === 'commonjs') return undefined;
    if (whole || names.length > 0) lines.push({ from: parts[4]!, ...(whole ? { whole } : {}), names });
  }
  const esm = (statement: ImportStatement) => {
    if (!statement.whole) return namedList('import', statement.names, statement.from);
    const whole = `${statement.whole.namespace ? '* as ' : ''}${statement.whole.name}`;
    return statement.names.length === 0 ? `import ${whole} from '${statement.from}';` : namedList('import', statement.names, statement.from).replace(/^import /, `import ${whole}, `);
  };
  if (moduleType === 'module') return lines.map((line) => (typeof line === 'string' ? line : esm(line))).join('\n');
  if (form === 'file') {
    const text = lines.map((line) => (typeof line === 'string' ? line : esm(line))).join('\n');
    // printModule ends the module with one newline; the blank lines after the imports are the body's to keep.
    const trailing = /\n*$/.exec(text)![0];
    return printModule(text, 'commonjs').replace(/\n$/, '') + trailing;
  }
  // A vitest suite in a CommonJS project: the project's own files through require(), where the last of them stood.
  const relative = lines.filter((line): line is ImportStatement => typeof line !== 'string' && line.from.startsWith('.'));
  const last = relative.at(-1);
  const requires = relative.map((statement) => {
    const call = `require(${quote(statement.from)})`;
    if (statement.whole) return `const ${statement.whole.name} = ${call};`;
    return objectLiteral('', 'const ', statement.names.map((name) => name.replace(/\s+as\s+/, ': ')), ` = ${call};`);
  });
  const out = lines.flatMap((line) => {
    if (typeof line === 'string') return [line];
    if (!line.from.startsWith('.')) return [esm(line)];
    return line === last ? [`import { createRequire } from 'node:module';\n\nconst require = createRequire(import.meta.url);\n${requires.join('\n')}`] : [];
  });
  return SUITE_NOTE + out.join('\n');
}

/** Identifiers the code refers to, comments left out (the compiler keeps an import only for a value use). */
function usedNames(code: string): Set<string> {
  const stripped = code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  // Not a property (`a.name`), but a spread (`...name`) is a use.
  return new Set(stripped.match(/(?<![\w$])(?<![^.]\.)(?<!^\.)[A-Za-z_$][\w$]*/gm) ?? []);
}
