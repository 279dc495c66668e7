/**
 * JSON with comments and trailing commas, as tsconfig.json is written: `//` and block comments and a comma before `}`
 * or `]` are blanked outside strings, then JSON.parse reads the rest. Reading a tsconfig this way keeps TypeScript
 * (seconds of start-up) out of `generate`. Undefined when the text is not an object even so.
 */
export function parseJsonc(text: string): Record<string, unknown> | undefined {
  let out = '';
  let pendingComma = -1;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end - 1;
      pendingComma = -1;
    } else if (char === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (char === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      const end = close === -1 ? text.length : close + 2;
      out += text.slice(i, end).replace(/[^\n]/g, ' ');
      i = end - 1;
    } else if (char === ',') {
      pendingComma = out.length;
      out += char;
    } else if ((char === '}' || char === ']') && pendingComma !== -1) {
      out = `${out.slice(0, pendingComma)} ${out.slice(pendingComma + 1)}${char}`;
      pendingComma = -1;
    } else {
      if (!/\s/.test(char)) pendingComma = -1;
      out += char;
    }
  }
  try {
    const value = JSON.parse(out.replace(/^\uFEFF/, '')) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The index just past the string that opens at `start` (escapes skipped). */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return text.length;
}
