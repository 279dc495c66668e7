/**
 * The tokens of a JavaScript module this tool generated, comments and whitespace left out: enough to find module
 * specifiers and global names in the house-style JavaScript a generate prints (profile/javascriptProfile.ts)
 * without loading the TypeScript compiler for its parser. Not a general tokenizer: it knows the syntax the
 * templates use (strings, template literals with `${}` nesting, regular expressions after an operator).
 */
export interface Token {
  readonly kind: 'name' | 'string' | 'template' | 'regex' | 'number' | 'punct';
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

const NAME = /[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*/y;
const NUMBER = /(?:0[xXoObB][\da-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)n?/y;
const PUNCT = /\?\?=|\?\.(?!\d)|\.\.\.|===|!==|\*\*=|<<=|>>>=|>>>|>>=|=>|==|!=|<=|>=|&&=|\|\|=|\?\?|&&|\|\||\+\+|--|[+\-*/%&|^<>]=|<<|>>|\*\*|[{}()[\];,.<>+\-*/%&|^!~?:=@#]/y;
/** After these a `/` starts a regular expression; after a name, number, `)` or `]` it divides. */
const REGEX_AFTER_KEYWORD = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);

/** Undefined when the text holds something this does not read (an unterminated string or comment). */
export function scanJavaScript(code: string): Token[] | undefined {
  const tokens: Token[] = [];
  // Open template literals: for each, the brace depth at which its `${` was opened.
  const templates: number[] = [];
  let depth = 0;
  let i = 0;
  const push = (kind: Token['kind'], start: number, end: number) => tokens.push({ kind, text: code.slice(start, end), start, end });
  /** A template literal's text from `i` (just after a backtick or a closing `}`), up to its end or its next `${`. */
  const templateText = (start: number): boolean => {
    let j = i;
    while (j < code.length) {
      const c = code[j]!;
      if (c === '\\') j += 2;
      else if (c === '`') {
        push('template', start, j + 1);
        i = j + 1;
        return true;
      } else if (c === '$' && code[j + 1] === '{') {
        push('template', start, j + 2);
        templates.push(depth);
        depth += 1;
        i = j + 2;
        return true;
      } else j += 1;
    }
    return false;
  };
  while (i < code.length) {
    const c = code[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i += 1;
      continue;
    }
    if (c === '/' && code[i + 1] === '/') {
      const end = code.indexOf('\n', i);
      i = end === -1 ? code.length : end;
      continue;
    }
    if (c === '/' && code[i + 1] === '*') {
      const end = code.indexOf('*/', i + 2);
      if (end === -1) return undefined;
      i = end + 2;
      continue;
    }
    if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < code.length && code[j] !== c && code[j] !== '\n') j += code[j] === '\\' ? 2 : 1;
      if (code[j] !== c) return undefined;
      push('string', i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '`') {
      const start = i;
      i += 1;
      if (!templateText(start)) return undefined;
      continue;
    }
    if (c === '}' && templates.length > 0 && templates.at(-1) === depth - 1) {
      templates.pop();
      depth -= 1;
      const start = i;
      i += 1;
      if (!templateText(start)) return undefined;
      continue;
    }
    if (c === '/' && startsRegex(tokens.at(-1))) {
      let j = i + 1;
      let inClass = false;
      while (j < code.length && code[j] !== '\n' && (inClass || code[j] !== '/')) {
        if (code[j] === '\\') j += 1;
        else if (code[j] === '[') inClass = true;
        else if (code[j] === ']') inClass = false;
        j += 1;
      }
      if (code[j] !== '/') return undefined;
      j += 1;
      while (j < code.length && /[a-z]/.test(code[j]!)) j += 1;
      push('regex', i, j);
      i = j;
      continue;
    }
    for (const [kind, pattern] of [['name', NAME], ['number', NUMBER], ['punct', PUNCT]] as const) {
      pattern.lastIndex = i;
      const match = pattern.exec(code);
      if (match && match[0].length > 0) {
        push(kind, i, i + match[0].length);
        i += match[0].length;
        if (kind === 'punct' && match[0] === '{') depth += 1;
        if (kind === 'punct' && match[0] === '}') depth -= 1;
        break;
      }
      if (kind === 'punct') return undefined;
    }
  }
  return templates.length === 0 ? tokens : undefined;
}

function startsRegex(previous: Token | undefined): boolean {
  if (!previous) return true;
  if (previous.kind === 'name') return REGEX_AFTER_KEYWORD.has(previous.text);
  if (previous.kind === 'punct') return previous.text !== ')' && previous.text !== ']' && previous.text !== '}';
  return false;
}
