import path from 'node:path';
import type { DesignModel } from '../model/types.js';
import { javaScriptPath, toJavaScriptFiles } from './javascript/toJavaScriptFiles.js';
import { transpileToJavaScript, type ModuleType } from './javascript/transpile.js';
import { applyProfile } from './profile/applyProfile.js';
import { REFERENCE_PROFILE, type ProjectProfile } from './profile/types.js';
import { findTarget, referenceFramework, referenceTarget } from './registry.js';
import type { CodeExcerpt, ExcerptId, ScaffoldFile, ScaffoldTarget, TargetContext } from './types.js';

export { SCAFFOLD_TARGETS, findTarget, referenceFramework, referenceTarget } from './registry.js';
export { detectModuleType } from './detectModuleType.js';
export type { ModuleType } from './javascript/transpile.js';
export { readProjectProfile } from './profile/readProjectProfile.js';
export { scaffoldProject, type ProjectScaffolding } from './scaffoldProject.js';
export { detectPackageManager } from './placement/installCommands.js';
export { REFERENCE_PROFILE, type ProjectProfile, type TestRunner } from './profile/types.js';
export type { CodeExcerpt, ExcerptId, ScaffoldFile, ScaffoldRole, ScaffoldTarget } from './types.js';

export interface ScaffoldOptions {
  dir: string;
  /**
   * JavaScript projects only: the package.json "type" where the files land (see detectModuleType). Default
   * 'commonjs', Node's rule for a package without one. TypeScript output is always ES modules.
   */
  moduleType?: ModuleType;
  /**
   * The project's language/module profile and test runner (readProjectProfile). Default: the reference profile
   * (TypeScript, Node ESM, vitest), or for JavaScript the one `moduleType` implies.
   */
  profile?: ProjectProfile;
  /** No target for the stack: generate the reference target instead of nothing (the caller says so). */
  reference?: boolean;
}

/**
 * The target for the design: the stack's own, or the reference one when asked for. A stack whose framework is
 * unknown and whose actions need no HTTP route gets the plain wrapper either way (referenceFramework), never the
 * Express reference the technology-agnostic stack would otherwise match.
 */
function targetOf(model: DesignModel, reference: boolean | undefined): ScaffoldTarget | undefined {
  if (referenceFramework(model.stack, model.actions) !== model.stack.framework) return referenceTarget(model.stack, model.actions);
  return findTarget(model.stack) ?? (reference ? referenceTarget(model.stack, model.actions) : undefined);
}

/** The runnable scaffolding for the design's stack, placed under `options.dir`; [] when no target supports the stack. */
export function generateScaffold(model: DesignModel, options: ScaffoldOptions): ScaffoldFile[] {
  const target = targetOf(model, options.reference);
  if (!target) return [];
  const dir = normalizeDir(options.dir);
  const profile = profileOf(model, options);
  return filesFor(target, model, profile, target.files(model, contextOf(model, profile, dir)))
    .map((file) => ({ ...file, path: dir === '' ? file.path : `${dir}/${file.path}` }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The same code the scaffolding contains, for the document to embed: from the target generateScaffold uses (the
 * reference target too, when asked for); {} when there is none.
 */
export function documentExcerpts(model: DesignModel, options: Partial<ScaffoldOptions> = {}): Partial<Record<ExcerptId, CodeExcerpt>> {
  const target = targetOf(model, options.reference);
  if (!target) return {};
  const dir = normalizeDir(options.dir ?? 'src/idempotency');
  const profile = profileOf(model, options);
  const files = target.files(model, contextOf(model, profile, dir));
  let excerpts: Partial<Record<ExcerptId, CodeExcerpt>>;
  if (model.stack.language === 'javascript') {
    const moduleType = profile.moduleSystem === 'esm' ? 'module' : 'commonjs';
    excerpts = javaScriptExcerpts(target.excerpts(model, files), files, filesFor(target, model, profile, files), moduleType);
  } else {
    excerpts = target.excerpts(model, applyProfile(files, profile));
  }
  for (const excerpt of Object.values(excerpts)) {
    if (excerpt.path !== undefined && dir !== '') excerpt.path = `${dir}/${excerpt.path}`;
  }
  return excerpts;
}

/**
 * Targets write TypeScript for Node ESM; a TypeScript project gets it adapted to its profile (applyProfile), a
 * JavaScript project the same files with the types stripped (one source of truth), in its module format.
 */
function filesFor(target: ScaffoldTarget, model: DesignModel, profile: ProjectProfile, files: ScaffoldFile[]): ScaffoldFile[] {
  if (model.stack.language !== 'javascript') return applyProfile(files, profile);
  const moduleType: ModuleType = profile.moduleSystem === 'esm' ? 'module' : 'commonjs';
  // A JavaScript project's profile adapts nothing of the TypeScript, only what every file shares (bare builtins).
  return applyProfile(toJavaScriptFiles(files, moduleType, { esmTests: profile.testRunner === 'vitest' }), profile);
}

function profileOf(model: DesignModel, options: Partial<ScaffoldOptions>): ProjectProfile {
  if (options.profile) return options.profile;
  const runner = (['vitest', 'jest', 'node-test', 'mocha'] as const).find((name) => name === model.stack.testFramework) ?? 'vitest';
  if (model.stack.language !== 'javascript') return { ...REFERENCE_PROFILE, testRunner: runner };
  return { ...REFERENCE_PROFILE, language: 'javascript', moduleSystem: options.moduleType === 'module' ? 'esm' : 'commonjs', testRunner: runner };
}

/** vitest runs every suite as an ES module (it cannot be require()d); the other runners load the project's format. */
function contextOf(model: DesignModel, profile: ProjectProfile, scaffoldDir?: string): TargetContext {
  const esmTests = model.stack.language === 'javascript' && profile.testRunner === 'vitest';
  return {
    testRunner: profile.testRunner,
    testModuleSystem: esmTests ? 'esm' : profile.moduleSystem,
    ...(scaffoldDir ? { scaffoldDir } : {}),
    ...(profile.jestIgnoresSuites ? { jestIgnoresSuites: true } : {}),
    ...(profile.tapHarness ? { tapHarness: true } : {}),
    ...(profile.packageDir ? { packageDir: profile.packageDir } : {}),
    ...(profile.httpPlatform ? { httpPlatform: profile.httpPlatform } : {}),
    ...(model.stack.language === 'javascript' ? { javascript: profile.moduleSystem === 'esm' ? 'module' : 'commonjs' } : {}),
  };
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
