import type { RenderedFile } from '../render/renderDocument.js';

/** The style the generators already emit code in; test/emit/houseStyle.test.ts keeps them honest. */
export const HOUSE_STYLE = { singleQuote: true, printWidth: 110 } as const;

/** YAML keeps double quotes, the convention of the Prometheus and CI files the tool emits. */
export const houseStyleFor = (file: string) => (/\.ya?ml$/.test(file) ? { printWidth: HOUSE_STYLE.printWidth } : HOUSE_STYLE);

/**
 * Formats what prettier understands best: Markdown documents and generated TypeScript/JavaScript/YAML/JSON.
 * HTML is emitted already formatted (prettier would reflow <pre> and inline SVG).
 *
 * Code follows the user's prettier config. Without one it is formatted in HOUSE_STYLE, which the templates are
 * written in; an interpolated value can push a line past the print width, so only files with such a line go through
 * the slow (~100 ms per file) pass, which was most of a cold `generate`. test/emit/houseStyle.test.ts checks that
 * what comes out is exactly house style for every fixture.
 */
/**
 * Whether prettier could shorten a line of generated code. It never rewraps comments or the inside of strings and
 * template literals, so only a long line of plain code (typically one an interpolated name made longer) needs it.
 */
export function hasBreakableLongLine(text: string): boolean {
  let inTemplate = false;
  for (const line of text.split('\n')) {
    const startsInTemplate = inTemplate;
    if ((line.replace(/\\./g, '').match(/`/g)?.length ?? 0) % 2 === 1) inTemplate = !inTemplate;
    if (line.length <= HOUSE_STYLE.printWidth || startsInTemplate) continue;
    const code = line.trimStart();
    if (/^(\/\/|\/\*|\*|#)/.test(code) || /['"`]/.test(code)) continue;
    return true;
  }
  return false;
}

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
    if (!isDocument && userConfig === null && (file.path.endsWith('.md') || !hasBreakableLongLine(file.contents))) {
      out.push(file);
      continue;
    }
    try {
      const contents = await prettier.format(file.contents, {
        ...(userConfig ?? houseStyleFor(file.path)),
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
