import path from 'node:path';
import type { DesignModel } from '../model/types.js';
import { findTarget } from './registry.js';
import type { CodeExcerpt, ExcerptId, ScaffoldFile } from './types.js';

export { SCAFFOLD_TARGETS, findTarget } from './registry.js';
export type { CodeExcerpt, ExcerptId, ScaffoldFile, ScaffoldRole, ScaffoldTarget } from './types.js';

/** The runnable scaffolding for the design's stack, placed under `options.dir`; [] when no target supports the stack. */
export function generateScaffold(model: DesignModel, options: { dir: string }): ScaffoldFile[] {
  const target = findTarget(model.stack);
  if (!target) return [];
  const dir = normalizeDir(options.dir);
  return target
    .files(model)
    .map((file) => ({ ...file, path: dir === '' ? file.path : `${dir}/${file.path}` }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The same code the scaffolding contains, for the document to embed; {} when no target supports the stack. */
export function documentExcerpts(model: DesignModel, options: { dir?: string } = {}): Partial<Record<ExcerptId, CodeExcerpt>> {
  const target = findTarget(model.stack);
  if (!target) return {};
  const dir = normalizeDir(options.dir ?? 'src/idempotency');
  const excerpts = target.excerpts(model, target.files(model));
  for (const excerpt of Object.values(excerpts)) {
    if (excerpt.path !== undefined && dir !== '') excerpt.path = `${dir}/${excerpt.path}`;
  }
  return excerpts;
}

function normalizeDir(dir: string): string {
  const posix = path.posix.normalize(dir.replace(/\\/g, '/')).replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  if (posix.startsWith('..') || path.posix.isAbsolute(posix)) throw new Error(`scaffold dir must stay inside the project: ${dir}`);
  return posix === '.' ? '' : posix;
}
