import { createHash } from 'node:crypto';
import path from 'node:path';
import type { RenderedFile } from '../render/renderDocument.js';
import { type ManifestEntry, normalizeText, readManifest, sha256Of } from './manifest.js';
import { readInside } from './safePath.js';

/** How generated code is formatted when the user's project has no prettier config. */
export const HOUSE_STYLE = { singleQuote: true, printWidth: 110 } as const;

/** prettier's options for a generated file: the user's config when the project has one, else the house style. */
export function formatOptions(filepath: string, userConfig: object | null = null) {
  return { ...(userConfig ?? HOUSE_STYLE), filepath, proseWrap: 'preserve', embeddedLanguageFormatting: 'off', endOfLine: 'lf' } as const;
}

export interface FormattedFile extends RenderedFile {
  /** Hash of the unformatted text, prettier's version and the options: what the manifest remembers (see below). */
  source?: string;
}

/**
 * prettier's output for the same input, version and options is the same, so when the manifest says a file was last
 * written from this very source and the disk still holds exactly what was written, the disk is the formatted text.
 * Formatting is most of a cold `generate`; this makes the common CI case (`--check` with nothing changed) skip it.
 */
async function previouslyFormatted(root: string, entry: ManifestEntry | undefined, source: string): Promise<string | undefined> {
  if (entry?.source !== source) return undefined;
  const onDisk = await readInside(root, entry.path).catch(() => undefined);
  return onDisk !== undefined && sha256Of(onDisk) === entry.sha256 ? normalizeText(onDisk) : undefined;
}

/** prettier's output by `source` (input, version and options), for a process that formats the same file twice (init, tests). */
const formattedInProcess = new Map<string, string>();

/** Forgets what this process formatted, as a fresh CLI run would (tests). */
export function clearFormatCache(): void {
  formattedInProcess.clear();
}

/**
 * Formats generated code the user keeps: TypeScript/JavaScript/YAML/JSON and the scaffold's README. The design
 * documents (HTML and Markdown) are emitted as rendered and never come here.
 */
export async function formatFiles(files: readonly RenderedFile[], cwd: string): Promise<FormattedFile[]> {
  const wanted = files.filter((f) => /\.(md|ts|js|mjs|cjs|tsx|json|ya?ml)$/.test(f.path));
  if (wanted.length === 0) return [...files];
  const root = path.resolve(cwd);
  const [prettier, manifest] = await Promise.all([import('prettier'), readManifest(root)]);
  const tracked = new Map(manifest.files.map((entry) => [entry.path, entry]));
  const out: FormattedFile[] = [];
  for (const file of files) {
    if (!wanted.includes(file)) {
      out.push(file);
      continue;
    }
    // Documents use fixed options so they are byte-identical on every machine; code follows the user's config.
    const userConfig = file.path.endsWith('.md') ? null : await prettier.resolveConfig(`${cwd}/${file.path}`, { editorconfig: false }).catch(() => null);
    if (file.formatted && userConfig === null) {
      // Templates are kept in the house style in this repo (a test checks it), so formatting would be a no-op.
      out.push(file);
      continue;
    }
    const options = formatOptions(file.path, userConfig);
    const source = createHash('sha256').update(JSON.stringify([prettier.version, options])).update('\0').update(normalizeText(file.contents)).digest('hex');
    const reused = await previouslyFormatted(root, tracked.get(file.path), source);
    if (reused !== undefined) {
      out.push({ ...file, contents: reused, source });
      continue;
    }
    const known = formattedInProcess.get(source);
    if (known !== undefined) {
      out.push({ ...file, contents: known, source });
      continue;
    }
    try {
      const contents = await prettier.format(file.contents, options);
      if (formattedInProcess.size >= 200) formattedInProcess.clear();
      formattedInProcess.set(source, contents);
      out.push({ ...file, contents, source });
    } catch {
      // Unparseable output is a bug elsewhere; keep it unformatted rather than lose it.
      out.push(file);
    }
  }
  return out;
}
