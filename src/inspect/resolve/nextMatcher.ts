/**
 * Whether a Next.js middleware runs for a path, by its `export const config = { matcher }`: true when it does (or has
 * no matcher: then it runs for every path), false when no matcher entry matches, undefined when the matcher is not
 * one this reads (an object with has / missing conditions, a value computed at runtime, a pattern it cannot compile).
 *
 * Matchers are path-to-regexp patterns, as Next.js compiles them: `/dashboard/:path*` (the path and anything under
 * it), `:name?` / `:name+` / `:name`, and custom groups such as `/((?!api|_next/static|favicon.ico).*)`.
 */
export function middlewareCovers(middlewareText: string, path: string): boolean | undefined {
  const at = middlewareText.search(/export\s+const\s+config\b/);
  // No config: the middleware runs for every path (a matcher written elsewhere is not one this reads).
  if (at < 0) return /\bmatcher\b/.test(middlewareText) ? undefined : true;
  const config = middlewareText.slice(at, at + 4000);
  if (!/\bmatcher\b/.test(config)) return true;
  const value = /\bmatcher\s*:\s*/.exec(config);
  const patterns = value ? stringList(config.slice(value.index + value[0].length)) : undefined;
  if (patterns === undefined || patterns.length === 0) return undefined;
  // A concrete path for the route template: each `:param` segment stands for one value.
  const concrete = path.replace(/:[^/]+/g, 'x');
  for (const pattern of patterns) {
    const compiled = compile(pattern);
    if (compiled === undefined) return undefined;
    if (compiled.test(concrete)) return true;
  }
  return false;
}

/** A path-to-regexp pattern as a RegExp over the whole path; undefined when it cannot be compiled. */
function compile(pattern: string): RegExp | undefined {
  let out = '';
  for (let i = 0; i < pattern.length; ) {
    const rest = pattern.slice(i);
    const group = rest.startsWith('(') ? balancedGroup(rest) : undefined;
    if (group !== undefined) {
      // A custom group is a regular expression already, followed perhaps by a modifier.
      const modifier = /^[?*+]/.exec(rest.slice(group.length))?.[0] ?? '';
      out += `(?:${group.slice(1, -1)})${modifier}`;
      i += group.length + modifier.length;
      continue;
    }
    const param = /^\/:([A-Za-z_]\w*)(\([^)]*\))?([?*+]?)/.exec(rest);
    if (param) {
      const inner = param[2] ? param[2].slice(1, -1) : '[^/]+';
      const modifier = param[3];
      out += modifier === '*' ? `(?:/${inner}(?:/${inner})*)?` : modifier === '+' ? `/${inner}(?:/${inner})*` : modifier === '?' ? `(?:/${inner})?` : `/${inner}`;
      i += param[0].length;
      continue;
    }
    if (rest[0] === '\\') {
      // An escape of the pattern's own (`\\.`): kept as the regular expression it is.
      out += rest.slice(0, 2);
      i += 2;
      continue;
    }
    out += /[.*+?^${}()|[\]]/.test(rest[0]!) ? `\\${rest[0]}` : rest[0];
    i += 1;
  }
  try {
    return new RegExp(`^${out}/?$`);
  } catch {
    return undefined;
  }
}

/** `(…)` with its nested parentheses, from the start of `text`; undefined when it does not close. */
function balancedGroup(text: string): string | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') {
      i++;
      continue;
    }
    if (text[i] === '(') depth++;
    if (text[i] === ')' && --depth === 0) return text.slice(0, i + 1);
  }
  return undefined;
}

const STRING = /^(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\$\n]|\\.)*)`)/;

/**
 * The string literal, or array of string literals, at the start of `text`, their escapes undone (the source's `'\\.'`
 * is the pattern `\.`); undefined for anything else (an object entry with has / missing, a name, a call).
 */
function stringList(text: string): string[] | undefined {
  const one = STRING.exec(text);
  if (one) return [unescape(one)];
  if (!text.startsWith('[')) return undefined;
  const out: string[] = [];
  let rest = text.slice(1);
  for (;;) {
    rest = rest.replace(/^[\s,]+/, '');
    if (rest.startsWith(']')) return out;
    const item = STRING.exec(rest);
    if (!item) return undefined;
    out.push(unescape(item));
    rest = rest.slice(item[0].length);
  }
}

const unescape = (match: RegExpExecArray) => (match[1] ?? match[2] ?? match[3] ?? '').replace(/\\(.)/g, '$1');

