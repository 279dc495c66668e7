/** Escapes text so Markdown renders it literally: no emphasis, links, raw HTML or headings from user values. */
export function escapeMarkdown(text: string): string {
  const flat = text
    .replace(/\r?\n/g, ' ')
    .replace(/[\\`*[\]<>|~]/g, (ch) => `\\${ch}`)
    .replace(/&/g, '&amp;')
    // An underscore inside a word (locked_until) never starts emphasis; every other one is escaped, each on its
    // own: "__init__" must become "\_\_init\_\_", or the second underscore of a pair opens emphasis and the
    // heading's anchor no longer matches the links to it.
    .replace(/(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, '\\_');
  // Characters that only matter at the start of a line: headings, lists, block quotes.
  // A backslash goes before the list marker itself: "8\\. Security", never "\\8." which GitHub shows literally.
  return flat.replace(/^([#+\-=>])/, '\\$1').replace(/^(\d+)([.)])(?=\s|$)/, '$1\\$2');
}

/** An inline code span that survives backticks in its content (CommonMark: a longer fence, padded). */
export function codeSpan(text: string, inTable = false): string {
  const flat = text.replace(/\r?\n/g, ' ');
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') || longest > 0 ? ' ' : '';
  const body = inTable ? flat.replace(/\|/g, '\\|') : flat;
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** A fenced block whose fence is longer than any backtick run inside the code. */
export function codeBlock(code: string, language: string): string {
  const longest = Math.max(2, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language.replace(/[^a-z0-9+-]/gi, '')}\n${code}\n${fence}`;
}
