import type { RenderedFile } from '../render/renderDocument.js';

/** How generated code is formatted when the user's project has no prettier config. */
export const HOUSE_STYLE = { singleQuote: true, printWidth: 110 } as const;

/**
 * Formats what prettier understands best: Markdown documents and generated TypeScript/JavaScript/YAML/JSON.
 * HTML is emitted already formatted (prettier would reflow <pre> and inline SVG).
 * This is the most expensive step of a cold `generate` (the scaffold templates are not stored in house style), so
 * prettier is imported only here, and only when there is something to format.
 */
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
    const userConfig = file.path.endsWith('.md') ? null : await prettier.resolveConfig(`${cwd}/${file.path}`, { editorconfig: false }).catch(() => null);
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
