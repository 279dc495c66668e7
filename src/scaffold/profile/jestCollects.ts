import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The part of a project's Jest config that decides which files are suites; undefined = Jest's default. */
export interface JestCollection {
  testMatch?: string[];
  testRegex?: string[];
  roots?: string[];
  /** Jest's rootDir, relative to the config's folder (NestJS sets "src"). */
  rootDir?: string[];
}

// Jest's own order: a config file beside package.json wins over its "jest" key.
export const JEST_CONFIG_FILES = ['jest.config.js', 'jest.config.ts', 'jest.config.mjs', 'jest.config.cjs', 'jest.config.json'];
const KEYS = ['testMatch', 'testRegex', 'roots', 'rootDir'] as const;
const DEFAULT_TEST_MATCH = ['**/__tests__/**/*.[jt]s?(x)', '**/?(*.)+(spec|test).[jt]s?(x)'];

/**
 * testMatch, testRegex and roots as the project's Jest config writes them: the package.json "jest" key, or the
 * literal values in a jest.config.* (code, so read without running it: a key whose value is not a string, an array
 * of strings or a regular expression literal counts as unknown and leaves the default). Undefined: no config.
 */
export function readJestCollection(folder: string, pkg: Record<string, unknown>): JestCollection | undefined {
  for (const name of JEST_CONFIG_FILES) {
    let text: string;
    try {
      text = readFileSync(path.join(folder, name), 'utf8');
    } catch {
      continue;
    }
    if (name.endsWith('.json')) return fromObject(safeJson(text));
    const code = withoutComments(text);
    const out: JestCollection = {};
    for (const key of KEYS) {
      const value = literalAfter(code, key);
      if (value !== undefined) out[key] = value;
    }
    return out;
  }
  return fromObject(pkg['jest']);
}

/** Whether Jest, configured so in `folder` (where package.json is), collects the file `file` (absolute). */
export function jestCollects(collection: JestCollection | undefined, folder: string, file: string): boolean {
  const posix = (text: string) => text.split(path.sep).join('/');
  const absolute = posix(file);
  const rootDir = path.posix.resolve(posix(folder), collection?.rootDir?.[0] ?? '.');
  const withRoot = (text: string) => text.replace(/<rootDir>/g, posix(rootDir));
  const roots = (collection?.roots ?? ['<rootDir>']).map((root) => path.posix.resolve(posix(rootDir), withRoot(root)));
  if (!roots.some((root) => absolute === root || absolute.startsWith(`${root}/`))) return false;
  if (collection?.testRegex && collection.testRegex.length > 0) {
    return collection.testRegex.some((source) => {
      try {
        return new RegExp(source).test(absolute);
      } catch {
        return true;
      }
    });
  }
  const globs = (collection?.testMatch ?? DEFAULT_TEST_MATCH).map(withRoot);
  const positive = globs.filter((glob) => !glob.startsWith('!'));
  const negative = globs.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1));
  return positive.some((glob) => globToRegExp(glob).test(absolute)) && !negative.some((glob) => globToRegExp(glob).test(absolute));
}

function fromObject(value: unknown): JestCollection | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out: JestCollection = {};
  for (const key of KEYS) {
    const list = stringList((value as Record<string, unknown>)[key]);
    if (list !== undefined) out[key] = list;
  }
  return out;
}

function stringList(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((entry) => typeof entry === 'string')) return value as string[];
  return undefined;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The code with its comments blanked out; string and template literals are kept as they are. */
function withoutComments(code: string): string {
  let out = '';
  for (let index = 0; index < code.length; ) {
    const char = code[index]!;
    if (char === '"' || char === "'" || char === '`') {
      const end = stringEnd(code, index);
      out += code.slice(index, end);
      index = end;
    } else if (code.startsWith('//', index)) {
      const end = code.indexOf('\n', index);
      index = end === -1 ? code.length : end;
    } else if (code.startsWith('/*', index)) {
      const end = code.indexOf('*/', index + 2);
      index = end === -1 ? code.length : end + 2;
      out += ' ';
    } else {
      out += char;
      index += 1;
    }
  }
  return out;
}

/** The index just past the string literal opening at `start`. */
function stringEnd(code: string, start: number): number {
  const quote = code[start];
  let index = start + 1;
  while (index < code.length && code[index] !== quote) index += code[index] === '\\' ? 2 : 1;
  return index + 1;
}

/** `key: 'x'`, `key: ['x', "y"]` or `key: /re/` (also `"key":`): the strings, else undefined. */
function literalAfter(code: string, key: string): string[] | undefined {
  const found = new RegExp(`(?:^|[{,\\s])["']?${key}["']?\\s*:\\s*`).exec(code);
  if (!found) return undefined;
  let index = found.index + found[0].length;
  const one = (): string | undefined => {
    const char = code[index];
    if (char === '"' || char === "'" || char === '`') {
      const end = stringEnd(code, index);
      const body = code.slice(index + 1, end - 1);
      index = end;
      if (char === '`' && body.includes('${')) return undefined;
      return body.replace(/\\(.)/g, (_escape, next: string) => ({ n: '\n', t: '\t' })[next] ?? next);
    }
    if (char === '/') {
      const end = /^\/((?:\\.|\[(?:\\.|[^\]])*\]|[^/\\\n])+)\/[a-z]*/.exec(code.slice(index));
      if (!end) return undefined;
      index += end[0].length;
      return end[1];
    }
    return undefined;
  };
  const skipSpace = () => {
    while (/\s/.test(code[index] ?? '')) index += 1;
  };
  if (code[index] !== '[') {
    const value = one();
    return value === undefined ? undefined : [value];
  }
  index += 1;
  const values: string[] = [];
  for (;;) {
    skipSpace();
    if (code[index] === ']') return values;
    const value = one();
    if (value === undefined) return undefined;
    values.push(value);
    skipSpace();
    if (code[index] === ',') index += 1;
    else if (code[index] !== ']') return undefined;
  }
}

/** A Jest glob (micromatch syntax: `**`, `*`, `?`, `[…]`, `{a,b}`, extglobs `?(…)`, `+(…)`, `*(…)`, `@(…)`, `!(…)`). */
export function globToRegExp(glob: string): RegExp {
  let index = 0;
  const parse = (closers: string): string => {
    let out = '';
    while (index < glob.length && !closers.includes(glob[index]!)) {
      const char = glob[index]!;
      const next = glob[index + 1];
      if ('?+*@!'.includes(char) && next === '(') {
        index += 2;
        const alternatives = [parse('|)')];
        while (glob[index] === '|') {
          index += 1;
          alternatives.push(parse('|)'));
        }
        index += 1;
        const group = alternatives.join('|');
        out += char === '!' ? `(?:(?!(?:${group})(?:/|$))[^/]*)` : `(?:${group})${char === '@' ? '' : char}`;
      } else if (char === '*' && next === '*') {
        index += 2;
        if (glob[index] === '/') {
          index += 1;
          out += '(?:[^/]*/)*';
        } else out += '.*';
      } else if (char === '*') {
        index += 1;
        out += '[^/]*';
      } else if (char === '?') {
        index += 1;
        out += '[^/]';
      } else if (char === '[') {
        const end = glob.indexOf(']', index + 1);
        if (end === -1) {
          out += '\\[';
          index += 1;
        } else {
          out += `[${glob.slice(index + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\')}]`;
          index = end + 1;
        }
      } else if (char === '{') {
        index += 1;
        const alternatives = [parse(',}')];
        while (glob[index] === ',') {
          index += 1;
          alternatives.push(parse(',}'));
        }
        index += 1;
        out += `(?:${alternatives.join('|')})`;
      } else {
        out += char.replace(/[.+^${}()|\\]/g, '\\$&');
        index += 1;
      }
    }
    return out;
  };
  return new RegExp(`^${parse('')}$`);
}
