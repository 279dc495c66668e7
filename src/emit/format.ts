import type { RenderedFile } from '../render/renderDocument.js';

/** The style the generators already emit code in; test/emit/houseStyle.test.ts keeps them honest. */
export const HOUSE_STYLE = { singleQuote: true, printWidth: 110 } as const;

/**
 * Formats what prettier understands best: Markdown documents and generated TypeScript/JavaScript/YAML/JSON.
 * HTML is emitted already formatted (prettier would reflow <pre> and inline SVG).
 *
 * Code follows the user's prettier config. Without one it is formatted in HOUSE_STYLE, which the templates are
 * written in; interpolated values can only push a line past the print width, so only such files go through the
 * slow (~100 ms per file) pass, which was most of a cold `generate`. test/emit/houseStyle.test.ts checks the result.
 */
const hasLongLine = (text: string) => text.split('\n').some((line) => line.length > HOUSE_STYLE.printWidth);

export async function formatFiles(files: readonly RenderedFile[], cwd: string): Promise<RenderedFile[]> {
  const wanted = files.filter((f) => /\.(md|ts|js|mjs|cjs|tsx|json|ya?ml)$/.test(f.path));
  if (wanted.length === 0) return [...files];
  const prettier = await import('prettier');
  const out: RenderedFile[] = [];
  for (const file of files) {
    if (!wanted.includes(file)) {
      out.push(file);
      continue;
    }
    // Documents use fixed options so they are byte-identical on every machine; code follows the user's config.
    const isDocument = file.class === 'managed' && file.path.endsWith('.md');
    const userConfig = isDocument ? null : await prettier.resolveConfig(`${cwd}/${file.path}`, { editorconfig: false }).catch(() => null);
    if (!isDocument && userConfig === null && (file.path.endsWith('.md') || !hasLongLine(file.contents))) {
      out.push(file);
      continue;
    }
    try {
      const contents = await prettier.format(file.contents, {
        ...(userConfig ?? HOUSE_STYLE),
        filepath: file.path,
        proseWrap: 'preserve',
        embeddedLanguageFormatting: 'off',
        endOfLine: 'lf',
      });
      out.push({ ...file, contents });
    } catch {
      // Unparseable output is a bug elsewhere; keep it unformatted rather than lose it.
      out.push(file);
    }
  }
  return out;
}
