/**
 * Path-only decisions, made before a file is read: what is never source of the running backend.
 * Content-based front-end detection lives in isFrontEnd.ts.
 */

/** Build output, dependencies, caches and archived copies: never walked. */
const SKIPPED_DIRS = new Set([
  'node_modules', 'dist', 'build', 'built', 'out', '.next', '.nuxt', '.output', '.svelte-kit', '.turbo', '.vercel',
  '.serverless', '.aws-sam', 'coverage', '.nyc_output', '.git', '.hg', '.cache', '.idea', '.vscode',
  'archive', 'archived', '_archive', 'backup', 'backups', 'deprecated', 'vendor', 'public', 'static',
  // Tests and their data.
  'test', 'tests', '__tests__', '__mocks__', '__fixtures__', 'fixtures', 'e2e', 'cypress', 'playwright',
  'spec', 'specs', '.storybook', 'stories',
]);

/** Folders whose names mean something else under a views folder (`views/stories/edit.hbs` is a page, not Storybook). */
const PAGE_NAMES = new Set(['stories', 'spec', 'specs', 'archive', 'archived']);

/** `rel`, when given, is the folder's path from the project root: a page folder under views/ or templates/ is read. */
export function isSkippedDir(name: string, rel?: string): boolean {
  if (rel !== undefined && PAGE_NAMES.has(name) && /(^|\/)(views|templates)\//.test(rel)) return false;
  return SKIPPED_DIRS.has(name) || name.startsWith('.');
}

export const SOURCE_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];

/** Server-side view templates, read for the forms that post to the app's routes. */
export const VIEW_TEMPLATE = /\.(?:pug|jade|ejs|hbs|handlebars|njk)$/i;

/** Non-source files some detectors read as text (crons in vercel.json, unique constraints in schemas, views' forms). */
export function isAuxiliaryFile(name: string): boolean {
  return name === 'vercel.json' || name.endsWith('.prisma') || name.endsWith('.sql') || VIEW_TEMPLATE.test(name);
}

export function isSourceFile(name: string): boolean {
  if (name.endsWith('.d.ts') || name.endsWith('.d.mts') || name.endsWith('.d.cts')) return false;
  if (/\.min\.[cm]?js$/.test(name)) return false;
  return SOURCE_EXTENSIONS.some((ext) => name.endsWith(ext));
}

/** Tests, stories and archived copies, by file name. */
export function isExcludedFileName(name: string): boolean {
  return (
    /\.(test|spec|e2e|stories|story|bench)\.[cm]?[jt]sx?$/.test(name) ||
    /\.(old|bak|orig|backup)\.[cm]?[jt]sx?$/.test(name) ||
    / copy( \d+)?\.[cm]?[jt]sx?$/.test(name) ||
    /^(vitest|jest|playwright|cypress|vite|webpack|rollup|eslint|prettier|tailwind|postcss|babel)\.config\./.test(name)
  );
}
