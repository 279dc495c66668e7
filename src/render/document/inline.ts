import type { Inline } from './types.js';

/**
 * Tiny inline markup for prose written in this codebase: `code` spans and **bold**.
 * Only our own sentence templates use it; user values are passed through `text()` / `code()`
 * as separate parts, so a backtick in a route can never open a code span.
 */
export function md(template: string): Inline[] {
  const parts: Inline[] = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*/g;
  let last = 0;
  for (let match = pattern.exec(template); match; match = pattern.exec(template)) {
    if (match.index > last) parts.push(template.slice(last, match.index));
    if (match[1] !== undefined) parts.push({ code: match[1] });
    else parts.push({ strong: match[2]! });
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push(template.slice(last));
  return parts;
}

export const code = (text: string): Inline => ({ code: text });
export const strong = (text: string): Inline => ({ strong: text });
export const cell = (...parts: Inline[]): Inline[] => parts;
