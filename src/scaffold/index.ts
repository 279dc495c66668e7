import path from 'node:path';
import type { DesignModel } from '../model/types.js';
import { javaScriptPath, toJavaScriptFiles } from './javascript/toJavaScriptFiles.js';
import { transpileToJavaScript, type ModuleType } from './javascript/transpile.js';
import { findTarget } from './registry.js';
import type { CodeExcerpt, ExcerptId, ScaffoldFile, ScaffoldTarget } from './types.js';

export { SCAFFOLD_TARGETS, findTarget } from './registry.js';
export { detectModuleType } from './detectModuleType.js';
export type { ModuleType } from './javascript/transpile.js';
export type { CodeExcerpt, ExcerptId, ScaffoldFile, ScaffoldRole, ScaffoldTarget } from './types.js';

export interface ScaffoldOptions {
  dir: string;
  /**
   * JavaScript projects only: the package.json "type" where the files land (see detectModuleType). Default
   * 'commonjs', Node's rule for a package without one. TypeScript output is always ES modules.
   */
  moduleType?: ModuleType;
}

/** The runnable scaffolding for the design's stack, placed under `options.dir`; [] when no target supports the stack. */
export function generateScaffold(model: DesignModel, options: ScaffoldOptions): ScaffoldFile[] {
  const target = findTarget(model.stack);
  if (!target) return [];
  const dir = normalizeDir(options.dir);
  return filesFor(target, model, options.moduleType)
    .map((file) => ({ ...file, path: dir === '' ? file.path : `${dir}/${file.path}` }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The same code the scaffolding contains, for the document to embed; {} when no target supports the stack. */
export function documentExcerpts(model: DesignModel, options: Partial<ScaffoldOptions> = {}): Partial<Record<ExcerptId, CodeExcerpt>> {
  const target = findTarget(model.stack);
  if (!target) return {};
  const dir = normalizeDir(options.dir ?? 'src/idempotency');
  const files = target.files(model);
  let excerpts = target.excerpts(model, files);
  if (model.stack.language === 'javascript') {
    const moduleType = options.moduleType ?? 'commonjs';
    excerpts = javaScriptExcerpts(excerpts, files, filesFor(target, model, moduleType, files), moduleType);
  }
  for (const excerpt of Object.values(excerpts)) {
    if (excerpt.path !== undefined && dir !== '') excerpt.path = `${dir}/${excerpt.path}`;
  }
  return excerpts;
}

/**
 * Targets write TypeScript; a JavaScript project gets the same files with the types stripped (one source of truth),
 * in the project's module format.
 */
function filesFor(target: ScaffoldTarget, model: DesignModel, moduleType: ModuleType = 'commonjs', files = target.files(model)): ScaffoldFile[] {
  return model.stack.language === 'javascript' ? toJavaScriptFiles(files, moduleType) : files;
}

/** Each excerpt of a whole TypeScript file becomes that file's JavaScript; a part of one is transpiled on its own. */
function javaScriptExcerpts(
  excerpts: Partial<Record<ExcerptId, CodeExcerpt>>,
  typescript: readonly ScaffoldFile[],
  javascript: readonly ScaffoldFile[],
  moduleType: ModuleType,
): Partial<Record<ExcerptId, CodeExcerpt>> {
  const out: Partial<Record<ExcerptId, CodeExcerpt>> = {};
  for (const [id, excerpt] of Object.entries(excerpts) as Array<[ExcerptId, CodeExcerpt]>) {
    if (excerpt.language !== 'typescript') {
      out[id] = excerpt;
      continue;
    }
    const jsPath = excerpt.path === undefined ? undefined : javaScriptPath(excerpt.path);
    const whole = typescript.some((file) => file.path === excerpt.path && file.contents === excerpt.code);
    const code = (whole && javascript.find((file) => file.path === jsPath)?.contents) || transpileToJavaScript(excerpt.code, moduleType);
    out[id] = { language: 'javascript', code, ...(jsPath === undefined ? {} : { path: jsPath }) };
  }
  return out;
}

function normalizeDir(dir: string): string {
  const posix = path.posix.normalize(dir.replace(/\\/g, '/')).replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  if (posix.startsWith('..') || path.posix.isAbsolute(posix)) throw new Error(`scaffold dir must stay inside the project: ${dir}`);
  return posix === '.' ? '' : posix;
}
