import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';

// dist/render/templates.js and src/render/templates.ts sit at the same depth below the package root.
const TEMPLATE_ROOT = fileURLToPath(new URL('../../templates/', import.meta.url));

const cache = new Map<string, string>();

export function readTemplate(relative: string): string {
  let text = cache.get(relative);
  if (text === undefined) {
    text = readFileSync(TEMPLATE_ROOT + relative, 'utf8');
    cache.set(relative, text);
  }
  return text;
}

/** An isolated, strict engine: no global helpers or partials leak in, and a missing field is an error, not "". */
const engine = Handlebars.create();

export function compileTemplate<T>(relative: string, options: { escape: boolean }): (view: T) => string {
  const template = engine.compile<T>(readTemplate(relative), { strict: true, knownHelpersOnly: true, noEscape: !options.escape });
  return (view: T) => template(view);
}
