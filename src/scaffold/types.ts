import type { DesignModel, StackDesign } from '../model/types.js';

export type ScaffoldRole =
  | 'ddl'
  | 'store'
  | 'core'
  | 'middleware'
  | 'fingerprint'
  | 'providers'
  | 'saga'
  | 'cleanup'
  | 'metrics'
  | 'alerts'
  | 'tests'
  | 'readme'
  | 'other';

export interface ScaffoldFile {
  /** Project-relative POSIX path (inside the config's scaffold.dir). */
  path: string;
  contents: string;
  /** 'scaffold' files are the user's after the first write; 'managed' ones are always regenerated. */
  class: 'scaffold' | 'managed';
  role: ScaffoldRole;
  /** Already in the house style (a template kept formatted in this repo): prettier may skip it. */
  formatted?: boolean;
}

export type ExcerptId = 'ddl' | 'middleware' | 'fingerprint' | 'cleanup' | 'tests' | 'monitoring';

export interface CodeExcerpt {
  language: string;
  code: string;
  path?: string;
}

/** One generator for one stack. Adding a stack = one file in targets/ + one line in registry.ts. */
export interface ScaffoldTarget {
  id: string;
  /** For messages: which stacks it serves, e.g. "Express + PostgreSQL (TypeScript or JavaScript)". */
  label: string;
  supports(stack: StackDesign): boolean;
  /** Files relative to the scaffold folder (the caller prefixes options.dir). */
  files(model: DesignModel): ScaffoldFile[];
  /** Which generated file (relative path) and which part of it the document embeds per excerpt. */
  excerpts(model: DesignModel, files: readonly ScaffoldFile[]): Partial<Record<ExcerptId, CodeExcerpt>>;
}
