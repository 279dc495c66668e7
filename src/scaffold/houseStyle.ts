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
