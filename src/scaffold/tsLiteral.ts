/** Renders plain data as a readable TypeScript literal (single quotes, bare keys where allowed). */
export function tsLiteral(value: unknown, indent = ''): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) >= 10_000 ? groupDigits(value) : String(value);
  if (typeof value === 'boolean') return String(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    const items = value.map((item) => tsLiteral(item, inner));
    const flat = `[${items.join(', ')}]`;
    return flat.length <= 100 && !flat.includes('\n') ? flat : `[\n${items.map((item) => `${inner}${item},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
  if (entries.length === 0) return '{}';
  const parts = entries.map(([key, item]) => `${propertyName(key)}: ${tsLiteral(item, inner)}`);
  const flat = `{ ${parts.join(', ')} }`;
  return flat.length <= 100 && !flat.includes('\n') ? flat : `{\n${parts.map((part) => `${inner}${part},`).join('\n')}\n${indent}}`;
}

export function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\r/g, '\\r').replace(/\n/g, '\\n').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')}'`;
}

export function propertyName(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : quote(key);
}

/** Text safe inside a line or block comment: no comment terminators, no line breaks. */
export function commentText(text: string): string {
  return text.replace(/\*\//g, '* /').replace(/[\r\n\u2028\u2029]+/g, ' ');
}

function groupDigits(value: number): string {
  const sign = value < 0 ? '-' : '';
  return sign + String(Math.abs(value)).replace(/\B(?=(\d{3})+(?!\d))/g, '_');
}
