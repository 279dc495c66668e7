import { HOUSE_WIDTH } from '../houseStyle.js';
import { scanJavaScript, type Token } from '../javascript/scanJavaScript.js';
import { bareName } from './bareBuiltins.js';
import { SANDBOX_GAPS, withSandboxBindings } from './jestSandbox.js';

/**
 * An old Jest's profile (bare builtins, sandbox globals) on the house-style JavaScript a generate printed, read with
 * a small tokenizer instead of the TypeScript compiler, so a JavaScript generate for a Jest 26 project loads
 * neither TypeScript nor prettier (#20). Each gives the text the compiler's reading gives (toBareBuiltins,
 * bindSandboxGlobals; test/scaffold/javascriptProfile.test.ts compares them on every scaffold) and says whether
 * prettier would leave the edited lines as they are; when it cannot tell, the file is formatted as before.
 */
export interface ProfileEdit {
  readonly code: string;
  /** prettier's output for `code` is `code` itself, when the input was. */
  readonly keepsLayout: boolean;
}

export interface OldJestTraits {
  readonly sandbox: boolean;
  readonly bare: boolean;
  /** How the file imports the vm module: its project's module format. */
  readonly style: 'import' | 'require';
}

/** The profile's name in the build's table (precompiled.ts): which edits, in which import style. */
export const oldJestVariant = (traits: OldJestTraits): string => (traits.sandbox ? `sandbox+${traits.bare ? 'bare+' : ''}${traits.style}` : 'bare');

/**
 * Both edits (sandbox globals, then bare builtins, as applyProfile orders them) on one house-style file. When an
 * edit could change prettier's layout, the build's table (made by the compiler and prettier from every file it
 * precompiled) has the answer for a file it knows; otherwise the result says prettier is needed.
 */
export function oldJestJavaScript(code: string, traits: OldJestTraits, precompiled: (code: string, variant: string) => string | undefined): ProfileEdit | undefined {
  const sandbox = traits.sandbox ? sandboxGlobalsInJavaScript(code, traits.style) : { code, keepsLayout: true };
  const bare = sandbox && traits.bare ? bareBuiltinsInJavaScript(sandbox.code) : sandbox;
  if (!sandbox || !bare) return undefined;
  if (sandbox.keepsLayout && bare.keepsLayout) return bare;
  const known = precompiled(code, oldJestVariant(traits));
  return known === undefined ? { code: bare.code, keepsLayout: false } : { code: known, keepsLayout: true };
}

const MOCKS = new Set(['mock', 'doMock', 'unmock', 'requireActual', 'requireMock']);

/** toBareBuiltins on JavaScript; undefined when the text is not one the tokenizer reads. */
export function bareBuiltinsInJavaScript(code: string): ProfileEdit | undefined {
  if (!code.includes('node:')) return { code, keepsLayout: true };
  const tokens = scanJavaScript(code);
  if (!tokens) return undefined;
  const literals = tokens.filter((token, index) => token.kind === 'string' && bareName(token.text.slice(1, -1)) !== undefined && isSpecifier(tokens, index));
  let out = code;
  for (const literal of [...literals].reverse()) out = out.slice(0, literal.start + 1) + bareName(literal.text.slice(1, -1))! + out.slice(literal.end - 1);
  return { code: out, keepsLayout: keepsLayout(code, tokens, literals.map((literal) => literal.start)) };
}

/** A module specifier: of an import or export declaration, an `import()` or `require()` call, or `jest.mock()`'s kin. */
function isSpecifier(tokens: readonly Token[], index: number): boolean {
  const before = tokens[index - 1];
  if (before?.kind === 'name' && (before.text === 'from' || (before.text === 'import' && tokens[index - 2]?.text !== '.'))) return true;
  if (before?.text !== '(') return false;
  const callee = tokens[index - 2];
  if (callee?.kind !== 'name') return false;
  if (callee.text === 'import' || callee.text === 'require') return tokens[index - 3]?.text !== '.' && tokens[index - 3]?.text !== '?.';
  return MOCKS.has(callee.text) && tokens[index - 3]?.text === '.' && tokens[index - 4]?.text === 'jest' && tokens[index - 5]?.text !== '.';
}

/**
 * Whether prettier keeps every line holding one of `positions` as it is when an edit shortens it: a whole
 * statement on its line, brackets balanced and within the width, after a statement or a block's opening. (A
 * shorter line in a statement prettier broke across lines might now fit on fewer.) Read before the edit, which
 * changes none of this but the line's length.
 */
function keepsLayout(code: string, tokens: readonly Token[], positions: readonly number[]): boolean {
  return positions.every((position) => {
    const lineStart = code.lastIndexOf('\n', position - 1) + 1;
    const lineEnd = code.indexOf('\n', position) === -1 ? code.length : code.indexOf('\n', position);
    if (lineEnd - lineStart > HOUSE_WIDTH) return false;
    const first = tokens.findIndex((token) => token.start >= lineStart);
    let last = first;
    while (last + 1 < tokens.length && tokens[last + 1]!.start < lineEnd) last += 1;
    if (first === -1 || tokens[last]!.end > lineEnd) return false;
    const previous = tokens[first - 1];
    if (previous && !(previous.text === ';' || previous.text === '{' || (previous.text === '}' && code.slice(previous.end, lineStart).includes('\n')))) return false;
    let depth = 0;
    for (let index = first; index <= last; index += 1) {
      const text = tokens[index]!.text;
      if (text === '(' || text === '[' || text === '{' || (tokens[index]!.kind === 'template' && text.endsWith('${'))) depth += 1;
      if (text === ')' || text === ']' || text === '}' || (tokens[index]!.kind === 'template' && text.startsWith('}'))) depth -= 1;
      if (depth < 0) return false;
    }
    return tokens[last]!.text === ';' ? depth === 0 : tokens[last]!.text === '{' && depth === 1;
  });
}

type Context = 'block' | 'object' | 'class' | 'pattern' | 'params' | 'import' | 'export' | 'other';

/** bindSandboxGlobals on JavaScript; undefined when the text is not one the tokenizer reads. */
export function sandboxGlobalsInJavaScript(code: string, style: 'import' | 'require'): ProfileEdit | undefined {
  const tokens = scanJavaScript(code);
  if (!tokens) return undefined;
  const contexts = bracketContexts(tokens);
  if (!contexts) return undefined;
  const used = new Set<string>();
  const declared = new Set<string>();
  const reads: Array<{ start: number; end: number; name: string }> = [];
  tokens.forEach((token, index) => {
    if (token.kind !== 'name' || !SANDBOX_GAPS.has(token.text)) return;
    const before = tokens[index - 1];
    const after = tokens[index + 1];
    if (before?.text === '.' || before?.text === '?.') {
      // `globalThis.X`, `(globalThis).X`, `(/** @type {unknown} */ (globalThis)).X` (JSDoc casts): the whole read.
      let at = index - 2;
      let parens = 0;
      while (tokens[at]?.text === ')') {
        parens += 1;
        at -= 1;
      }
      const opening = tokens.slice(at - parens, at);
      const global = tokens[at]?.text === 'globalThis' && opening.length === parens && opening.every((open) => open.text === '(');
      if (global && (parens > 0 || (tokens[at - 1]?.text !== '.' && tokens[at - 1]?.text !== '?.'))) {
        reads.push({ start: tokens[at - parens]!.start, end: token.end, name: token.text });
        used.add(token.text);
      }
      return;
    }
    const context = contexts[index]!;
    if (before && ['const', 'let', 'var', 'function', 'class'].includes(before.text)) declared.add(token.text);
    else if (after?.text === '=>' || context === 'params' || context === 'import') declared.add(token.text);
    else if (context === 'pattern') {
      // `{ X: y }` in a pattern names a property, which the compiler's reading counts as a use.
      if (after?.text === ':') used.add(token.text);
      else declared.add(token.text);
    } else if (context === 'export') return;
    else if ((context === 'object' || context === 'class') && memberName(tokens, index, context)) return;
    else used.add(token.text);
  });
  const at = afterImports(tokens);
  if (at === undefined) return undefined;
  const out = withSandboxBindings(code, at, used, declared, reads, 'javascript', style);
  // The bindings are whole statements within the width; a read made shorter is checked as bare builtins are.
  const shortened = reads.filter(({ name }) => !declared.has(name)).map((read) => read.start);
  return { code: out, keepsLayout: out === code || keepsLayout(code, tokens, shortened) };
}

/** A property's or a method's name in an object literal or a class body, not a reference. */
function memberName(tokens: readonly Token[], index: number, context: 'object' | 'class'): boolean {
  const after = tokens[index + 1]?.text;
  let before = index - 1;
  while (['async', 'static', 'get', 'set', '*'].includes(tokens[before]?.text ?? '')) before -= 1;
  const start = ['{', ',', ';', '}'].includes(tokens[before]?.text ?? '');
  if (context === 'object') return after === ':' || (start && after === '(');
  return start && (after === '(' || after === '=' || after === ';');
}

/** For each token, what the innermost bracket around it is; undefined when the brackets do not match. */
function bracketContexts(tokens: readonly Token[]): Context[] | undefined {
  const closing = matchBrackets(tokens);
  if (!closing) return undefined;
  const out: Context[] = [];
  const stack: Context[] = ['block'];
  tokens.forEach((token, index) => {
    const text = token.kind === 'punct' ? token.text : token.kind === 'template' && token.text.endsWith('${') ? '${' : undefined;
    const closes = token.kind === 'punct' ? [')', ']', '}'].includes(token.text) : token.kind === 'template' && token.text.startsWith('}');
    if (closes) stack.pop();
    out.push(stack.at(-1)!);
    if (text === '(' || text === '[' || text === '{' || text === '${') stack.push(contextOf(tokens, index, closing, stack.at(-1)!));
  });
  return out;
}

function contextOf(tokens: readonly Token[], index: number, closing: ReadonlyMap<number, number>, outer: Context): Context {
  const open = tokens[index]!.text;
  const before = tokens[index - 1];
  if (open.endsWith('${')) return 'other';
  const afterClose = tokens[(closing.get(index) ?? index) + 1]?.text;
  if (outer === 'pattern' || outer === 'params') {
    // Nested patterns; a default value (`= …`) inside one is an expression.
    return before?.text === '=' ? (open === '{' ? 'object' : 'other') : 'pattern';
  }
  if (open === '(') {
    if (afterClose === '=>') return 'params';
    if (before?.text === 'function' || (before?.kind === 'name' && tokens[index - 2]?.text === 'function')) return 'params';
    if (before?.text === '*' && tokens[index - 2]?.text === 'function') return 'params';
    if (before?.text === 'catch' && tokens[index - 2]?.text !== '.' && tokens[index - 2]?.text !== '?.') return 'params';
    // A method's parameters, in a class body or an object literal.
    if ((outer === 'class' || outer === 'object') && before?.kind === 'name' && tokens[closing.get(index)! + 1]?.text === '{') return 'params';
    return 'other';
  }
  if (before && ['const', 'let', 'var'].includes(before.text)) return 'pattern';
  if (open === '[') return 'other';
  if (before?.text === 'import') return 'import';
  if (before?.text === 'export') return 'export';
  if (!before || [';', '{', '}', ')', '=>'].includes(before.text) || ['else', 'try', 'finally', 'do'].includes(before.text)) {
    // `class X {`, `class X extends Y.Z {`: a class body.
    for (let back = index - 1; back >= 0 && back > index - 8; back -= 1) {
      const text = tokens[back]!.text;
      if (text === 'class') return 'class';
      if (tokens[back]!.kind !== 'name' && text !== '.') break;
    }
    return 'block';
  }
  if (before.kind === 'name' && !['return', 'typeof', 'await', 'yield', 'in', 'of', 'new', 'case'].includes(before.text)) {
    for (let back = index - 1; back >= 0 && back > index - 8; back -= 1) {
      const text = tokens[back]!.text;
      if (text === 'class') return 'class';
      if (tokens[back]!.kind !== 'name' && text !== '.') break;
    }
  }
  return 'object';
}

/** Each opening bracket's index to its closing one's; undefined when they do not pair up. */
function matchBrackets(tokens: readonly Token[]): Map<number, number> | undefined {
  const pairs = new Map<number, number>();
  const open: number[] = [];
  for (const [index, token] of tokens.entries()) {
    const opens = token.kind === 'punct' ? ['(', '[', '{'].includes(token.text) : token.kind === 'template' && token.text.endsWith('${');
    const closes = token.kind === 'punct' ? [')', ']', '}'].includes(token.text) : token.kind === 'template' && token.text.startsWith('}');
    if (closes) {
      const from = open.pop();
      if (from === undefined) return undefined;
      pairs.set(from, index);
    }
    if (opens) open.push(index);
  }
  return open.length === 0 ? pairs : undefined;
}

/**
 * Where the file's imports end, as the compiler's reading finds it: after its last import declaration or top-level
 * `const … = require('…');`, else after its opening directive; undefined for a statement this does not read.
 */
function afterImports(tokens: readonly Token[]): number | undefined {
  let end = 0;
  let index = 0;
  while (index < tokens.length) {
    let last = index;
    let depth = 0;
    while (last < tokens.length) {
      const text = tokens[last]!.kind === 'punct' ? tokens[last]!.text : '';
      if (text === '(' || text === '[' || text === '{') depth += 1;
      if (text === ')' || text === ']' || text === '}') depth -= 1;
      if (depth === 0 && text === ';') break;
      last += 1;
    }
    if (last >= tokens.length) return end;
    const statement = tokens.slice(index, last + 1);
    const first = statement[0]!;
    const isImport = first.text === 'import' && statement[1]?.text !== '(' && statement[1]?.text !== '.';
    const isDirective = statement.length === 2 && first.kind === 'string';
    if (isImport || isRequireStatement(statement) || (isDirective && end === 0)) end = tokens[last]!.end;
    else break;
    index = last + 1;
  }
  return end;
}

/** `const x = require('m');`, `const { a, b: c } = require('m');` (every declarator's value a require() call). */
function isRequireStatement(statement: readonly Token[]): boolean {
  if (!['const', 'let', 'var'].includes(statement[0]!.text)) return false;
  const declarators: Token[][] = [[]];
  let depth = 0;
  for (const token of statement.slice(1, -1)) {
    if (['(', '[', '{'].includes(token.text) && token.kind === 'punct') depth += 1;
    if ([')', ']', '}'].includes(token.text) && token.kind === 'punct') depth -= 1;
    if (depth === 0 && token.text === ',') declarators.push([]);
    else declarators.at(-1)!.push(token);
  }
  return declarators.every((declarator) => {
    const equals = declarator.findIndex((token) => token.text === '=');
    const value = declarator.slice(equals + 1);
    return equals > 0 && value[0]?.text === 'require' && value[1]?.text === '(' && value.at(-1)?.text === ')' && value.slice(2, -1).every((token) => token.text !== ')');
  });
}
