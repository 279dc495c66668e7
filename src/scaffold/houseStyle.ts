import { propertyName, quote, tsLiteral } from './tsLiteral.js';

/**
 * Layout helpers for emitters that print generated TypeScript in the house style themselves (prettier's layout at
 * HOUSE_STYLE's width), so generate need not load prettier to format it. test/emit/houseStyleEmitted.test.ts
 * compares every file marked formatted with prettier's output.
 */

/** HOUSE_STYLE.printWidth (src/emit/format.ts), repeated so emitters do not import the formatter's module. */
export const HOUSE_WIDTH = 110;

/**
 * `export { a, b } from './m.js';` (or `import`): on one line when it fits, else one name per line with a trailing
 * comma, as prettier prints a specifier list.
 */
export function namedList(keyword: 'export' | 'import', names: readonly string[], from: string): string {
  const flat = `${keyword} { ${names.join(', ')} } from '${from}';`;
  return flat.length <= HOUSE_WIDTH || names.length < 2 ? flat : `${keyword} {\n${names.map((name) => `  ${name},\n`).join('')}} from '${from}';`;
}

/**
 * `${head}{ a, b }${tail}` with the object literal on one line when the whole line fits, else one entry per line
 * (indented two more than `indent`) with a trailing comma: prettier's layout for an object written on one line.
 */
export function objectLiteral(indent: string, head: string, entries: readonly string[], tail: string): string {
  const flat = `${indent}${head}{ ${entries.join(', ')} }${tail}`;
  return flat.length <= HOUSE_WIDTH ? flat : `${indent}${head}{\n${entries.map((entry) => `${indent}  ${entry},\n`).join('')}${indent}}${tail}`;
}

/**
 * Plain data as a TypeScript literal laid out as prettier prints tsLiteral's output at the house style's width, for a
 * literal that starts `used` columns into its line and is followed on that line by `trail` characters. Objects stay
 * expanded where tsLiteral expands them (prettier keeps an object whose first key is on its own line) and expand
 * where the line would be too long; arrays are flat whenever they fit, unless every element is an object or array
 * of more than one entry (prettier breaks those). Strings use prettier's quote choice. Anything prettier would lay
 * out differently still (a string too long for its line, a number array prettier fills) makes a line longer than
 * the width: callers check `fitsHouseWidth` before marking the file formatted.
 */
export function houseLiteral(value: unknown, indent: string, used: number, trail: number): string {
  if (typeof value === 'string') return houseQuote(value);
  if (value === undefined || value === null || typeof value !== 'object') return tsLiteral(value, indent);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    const items = value as unknown[];
    const flat = `[${items.map((item) => houseLiteral(item, inner, 0, 0)).join(', ')}]`;
    const nested = (item: unknown) => item !== null && typeof item === 'object' && (Array.isArray(item) ? item.length : Object.values(item).filter((v) => v !== undefined).length) > 1;
    const mustBreak = items.length > 1 && (items.every((item) => nested(item) && !Array.isArray(item)) || items.every((item) => nested(item) && Array.isArray(item)));
    if (!mustBreak && !flat.includes('\n') && used + flat.length + trail <= HOUSE_WIDTH) return flat;
    return items.length === 0 ? '[]' : `[\n${items.map((item) => `${inner}${houseLiteral(item, inner, inner.length, 1)},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
  if (entries.length === 0) return '{}';
  // tsLiteral's choice (flat up to 100 characters), which prettier keeps when it fits.
  const chosenFlat = tsLiteral(value, indent);
  const flat = `{ ${entries.map(([key, item]) => `${propertyName(key)}: ${houseLiteral(item, inner, 0, 0)}`).join(', ')} }`;
  if (!chosenFlat.includes('\n') && !flat.includes('\n') && used + flat.length + trail <= HOUSE_WIDTH) return flat;
  return `{\n${entries
    .map(([key, item]) => {
      const head = `${inner}${propertyName(key)}: `;
      return `${head}${houseLiteral(item, inner, head.length, 1)},`;
    })
    .join('\n')}\n${indent}}`;
}

/**
 * Whether every line of code (comment lines aside, which prettier never wraps) is within the house style's width.
 * With `unbreakable`, lines prettier leaves long anyway pass too (see unbreakableLine).
 */
export function fitsHouseWidth(text: string, options: { unbreakable?: boolean } = {}): boolean {
  if (options.unbreakable) return text.split('\n').every((line) => line.length <= HOUSE_WIDTH || unbreakableLine(line));
  return text.split('\n').every((line) => line.length <= HOUSE_WIDTH || /^\s*(\/\/|\/?\*)/.test(line));
}

/**
 * A line prettier leaves long whatever the width: a comment, a test call's opening line, a lone string or template
 * literal (an argument, property value or assigned value on its own line), or code that fits followed by a comment.
 */
function unbreakableLine(line: string): boolean {
  if (/^\s*(\/\/|\/?\*)/.test(line) || /^\s*it\('[^'\\]*', (async )?\(\) => \{$/.test(line)) return true;
  if (/^\s*([\w$]+: |[\w$.]+ = )?('[^'\\]*'|"[^"\\]*"|`[^`]*(\\`[^`]*)*`)[,;]?$/.test(line)) return true;
  // Code before a trailing comment: only when no string could hold the ` // ` (an even count of single quotes).
  const comment = line.indexOf(' // ');
  const code = line.slice(0, comment);
  return comment > 0 && comment <= HOUSE_WIDTH && !/["`]/.test(code) && (code.split("'").length - 1) % 2 === 0;
}

/** A string literal with prettier's quotes: single, unless the text holds more single than double quotes. */
export function houseQuote(text: string): string {
  const singles = text.split("'").length - 1;
  const doubles = text.split('"').length - 1;
  if (singles <= doubles) return quote(text);
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r/g, '\\r').replace(/\n/g, '\\n').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')}"`;
}

/**
 * A call or `new` expression written on one line (`new Store({ pool, table: POLICY.table })`, `f(a, { b })`), laid
 * out as prettier prints it starting `used` columns into a line at `indent` and followed by `trail` characters: flat
 * when it fits; a call whose only argument is an object keeps the object on its line and breaks it (prettier's
 * hug); any other call puts each argument on its own line. Only for the scaffold's own fixed expressions: strings in
 * the text must hold no brackets or `, `.
 */
export function houseExpression(text: string, indent: string, used: number, trail: number): string {
  if (used + text.length + trail <= HOUSE_WIDTH) return text;
  const inner = `${indent}  `;
  if (text.startsWith('{ ') && text.endsWith(' }')) {
    const entries = splitTopLevel(text.slice(2, -2));
    return `{\n${entries
      .map((entry) => {
        const colon = entry.search(/: /);
        const head = colon > 0 && /^[\w$]+$/.test(entry.slice(0, colon)) ? entry.slice(0, colon + 2) : '';
        return `${inner}${head}${houseExpression(entry.slice(head.length), inner, inner.length + head.length, 1)},`;
      })
      .join('\n')}\n${indent}}`;
  }
  const open = text.indexOf('(');
  if (open < 0 || !text.endsWith(')')) return text;
  const callee = text.slice(0, open);
  const args = splitTopLevel(text.slice(open + 1, -1));
  if (args.length === 1 && args[0]!.startsWith('{ ')) return `${callee}(${houseExpression(args[0]!, indent, HOUSE_WIDTH, 0)})`;
  return `${callee}(\n${args.map((arg) => `${inner}${houseExpression(arg, inner, inner.length, 1)},`).join('\n')}\n${indent})`;
}

/** `a, { b, c }, d(e, f)` → its top-level parts. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if ('({['.includes(char)) depth += 1;
    else if (')}]'.includes(char)) depth -= 1;
    else if (depth === 0 && text.startsWith(', ', i)) {
      parts.push(text.slice(start, i));
      start = i + 2;
    }
  }
  parts.push(text.slice(start));
  return parts;
}
