import path from 'node:path';
import { UserError } from '../errors.js';

export function defaultOutput(format: 'html' | 'md'): string {
  return format === 'md' ? 'docs/idempotency-design.md' : 'docs/idempotency-design.html';
}

/** The output path for the chosen format: an explicit path wins, a default follows the format. */
export function resolveOutput(config: { output?: string | undefined }, format: 'html' | 'md', out?: string): string {
  const chosen = out ?? config.output;
  if (!chosen) return defaultOutput(format);
  const ext = path.extname(chosen);
  // The config schema checks its own "output"; --out is checked here the same way, before anything is rendered.
  if (ext !== '.html' && ext !== '.md') {
    throw new UserError(`--out must be a document path ending in .html or .md (found "${chosen}").`, `Pass e.g. --out docs/idempotency-design.${format}; --format decides the extension.`);
  }
  if (ext === '.html' && format === 'md') return chosen.slice(0, -ext.length) + '.md';
  if (ext === '.md' && format === 'html') return chosen.slice(0, -ext.length) + '.html';
  return chosen;
}
