import { readFileSync } from 'node:fs';

// templates/ sits two levels above both src/scaffold and dist/scaffold, so one relative URL serves tests and the build.
const ROOT = new URL('../../templates/scaffold/', import.meta.url);
const cache = new Map<string, string>();

/** A runtime source file copied verbatim into the user's project (framework-agnostic parts need no templating). */
export function readTemplate(relativePath: string): string {
  let text = cache.get(relativePath);
  if (text === undefined) {
    text = readFileSync(new URL(relativePath, ROOT), 'utf8').replace(/\r\n/g, '\n');
    cache.set(relativePath, text);
  }
  return text;
}
