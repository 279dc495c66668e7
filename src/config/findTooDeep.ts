/**
 * Finds the first place where JSON text nests deeper than `maxDepth`, without parsing it: a linear scan
 * with an explicit stack, so a hostile file a million brackets deep costs one pass and no recursion.
 * Returns the JSON path of the container that crossed the limit, or undefined when the text stays shallow
 * (syntax errors are left to JSON.parse, which reports them better).
 */
export function findTooDeep(text: string, maxDepth: number): Array<string | number> | undefined {
  // One entry per open container: the key or index currently being filled in it.
  const stack: Array<{ array: boolean; at: string | number }> = [];
  let lastString: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = endOfString(text, i);
      lastString = text.slice(i + 1, end);
      i = end;
      continue;
    }
    const top = stack[stack.length - 1];
    if (c === '{' || c === '[') {
      if (stack.length >= maxDepth) return [...stack.map((entry) => entry.at)];
      stack.push({ array: c === '[', at: c === '[' ? 0 : '' });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ':' && top && !top.array) {
      top.at = decodeKey(lastString ?? '');
    } else if (c === ',' && top?.array) {
      top.at = (top.at as number) + 1;
    }
  }
  return undefined;
}

function endOfString(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return text.length;
}

function decodeKey(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}
