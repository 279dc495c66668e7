/**
 * Turns any text (including user-provided action and step names) into a label that is valid in
 * both Mermaid's own grammar and beautiful-mermaid's line parser, and inert as markup.
 *
 * Mermaid's escape codes (`#quot;`, `#lt;`) are not understood by beautiful-mermaid, and quotes or
 * a shape's closing bracket end a label early there, so the few characters with syntactic meaning
 * are replaced by look-alikes instead. The result reads the same to a reviewer and renders the
 * same in GitHub's Mermaid, the Mermaid CLI and the inline SVG.
 */
const REPLACEMENTS: Record<string, string> = {
  '"': "'",
  '`': "'",
  '<': '\u2039', // ‹
  '>': '\u203a', // ›
  '&': '\uff06', // ＆ (an ampersand would be decoded as an entity by beautiful-mermaid)
  '#': '\uff03', // ＃ (Mermaid reads "#name;" as an escape code)
  '|': '\u00a6', // ¦ (ends an edge label)
  ';': ',', // statement separator in state diagrams
  '{': '(',
  '}': ')',
  '\\': '/',
};

/** A shape's own closing delimiter ends the label in beautiful-mermaid even inside quotes. */
const SHAPE_BRACKETS: Record<'rect' | 'rounded' | 'decision' | 'plain', Record<string, string>> = {
  rect: { '[': '(', ']': ')' },
  rounded: { '(': '[', ')': ']' },
  decision: {},
  plain: {},
};

export const MAX_LABEL_LENGTH = 80;

export function escapeMermaidLabel(text: string, context: keyof typeof SHAPE_BRACKETS = 'plain'): string {
  const brackets = SHAPE_BRACKETS[context];
  let out = '';
  // \s already covers line breaks; \p{Cc} the remaining control characters.
  for (const ch of text.replace(/[\s\p{Cc}]+/gu, ' ').trim()) {
    out += brackets[ch] ?? REPLACEMENTS[ch] ?? ch;
  }
  // Long labels make boxes wider than the page; a cut name is still recognisable.
  const chars = [...out];
  if (chars.length > MAX_LABEL_LENGTH) out = `${chars.slice(0, MAX_LABEL_LENGTH - 1).join('').trimEnd()}\u2026`;
  return out.length > 0 ? out : '\u2013';
}
