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
  '|': '\u00a6', // ¦ (ends an edge label)
  // Statement separator in state diagrams. Without ';' neither Mermaid's "#quot;" codes nor
  // "&amp;"-style entities (beautiful-mermaid decodes those first) can form, so '#' and '&' stay.
  ';': ',',
  '{': '(',
  '}': ')',
  '\\': '/', // "\n" is a line break in beautiful-mermaid
  // beautiful-mermaid reads *x*, **x** and ~~x~~ as markdown emphasis.
  '*': '\u2217', // ∗
  '~': '\u223c', // ∼
};

/** A shape's own closing delimiter ends the label in beautiful-mermaid even inside quotes. */
export type LabelContext = 'rect' | 'rounded' | 'decision' | 'transition' | 'plain';

const SHAPE_BRACKETS: Record<LabelContext, Record<string, string>> = {
  rect: { '[': '(', ']': ')' },
  rounded: { '(': '[', ')': ']' },
  decision: {},
  transition: {},
  plain: {},
};

export const MAX_LABEL_LENGTH = 80;

export function escapeMermaidLabel(text: string, context: LabelContext = 'plain'): string {
  const brackets = SHAPE_BRACKETS[context];
  let out = '';
  // \s already covers line breaks; \p{Cc} the remaining control characters.
  for (const ch of text.replace(/[\s\p{Cc}]+/gu, ' ').trim()) {
    const replaced = REPLACEMENTS[ch] ?? ch;
    // After the general replacements, which may themselves produce brackets ('}' → ')').
    out += brackets[replaced] ?? replaced;
  }
  // Mermaid's state grammar rejects a transition label ending in ':' or containing '::'.
  if (context === 'transition') out = out.replace(/:(\s*:)+/g, ':').replace(/\s*:\s*$/, '');
  // Long labels make boxes wider than the page; a cut name is still recognisable.
  const chars = [...out];
  if (chars.length > MAX_LABEL_LENGTH) out = `${chars.slice(0, MAX_LABEL_LENGTH - 1).join('').trimEnd()}\u2026`;
  return out.length > 0 ? out : '\u2013';
}
