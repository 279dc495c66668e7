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

/** JavaScript an emitter printed whose layout prettier must still make (ScaffoldFile.javascriptToFormat). */
export interface JavaScriptToFormat {
  readonly toFormat: string;
}

export interface ScaffoldFile {
  /** Project-relative POSIX path (inside the config's scaffold.dir). */
  path: string;
  contents: string;
  /** 'scaffold' files are the user's after the first write; 'managed' ones are always regenerated. */
  class: 'scaffold' | 'managed';
  role: ScaffoldRole;
  /** Already in the house style (a template kept formatted in this repo): prettier may skip it. */
  formatted?: boolean;
  /**
   * A JavaScript project only (TargetContext.javascript): this TypeScript file as JavaScript in the project's module
   * format, printed by its emitter in the house style, byte for byte what transpiling `contents` and formatting it
   * would give (test/scaffold/directJavaScript.test.ts). toJavaScriptFiles then neither transpiles nor formats it.
   * Absent where the emitter has no JavaScript form yet, or cannot promise the layout: the file is transpiled.
   */
  javascript?: string;
  /**
   * Where the emitter printed the JavaScript but a value from the design leaves a line too wide for the house style:
   * that JavaScript, types stripped as the compiler strips them, for prettier to lay out (it is loaded for this file
   * alone; the compiler is not). toJavaScriptFiles uses it when `javascript` is absent.
   */
  javascriptToFormat?: string;
  /**
   * Set when this is an addition to a file the user owns (schema.prisma, drizzle's journal): the text the addition was
   * computed from. It is written only while the file still reads exactly so, and never recorded in the manifest, so
   * the file stays the user's.
   */
  editOf?: string;
}

export type ExcerptId = 'ddl' | 'middleware' | 'fingerprint' | 'cleanup' | 'tests' | 'monitoring';

export interface CodeExcerpt {
  language: string;
  code: string;
  path?: string;
}

/** How the project runs its code and tests (from its profile): what the generated test suite is written for. */
export interface TargetContext {
  readonly testRunner: 'vitest' | 'jest' | 'node-test' | 'mocha';
  /** The module system of the test file as it runs (CommonJS has no import.meta). */
  readonly testModuleSystem: 'esm' | 'commonjs';
  /** The scaffold folder, project-relative: a suite run from compiled output finds the migration under it. */
  readonly scaffoldDir?: string;
  /** The project's Jest config collects no suite in the scaffold folder: the README says what to add. */
  readonly jestIgnoresSuites?: boolean;
  /** node:test suites run by the project's node-tap `test` script (see ProjectProfile.tapHarness). */
  readonly tapHarness?: boolean;
  /** The scaffold's package folder, project-relative, when not the root: its test command runs from there. */
  readonly packageDir?: string;
  /** The project's HTTP platform when a framework runs on more than one (NestJS on Fastify). */
  readonly httpPlatform?: 'fastify';
  /** A JavaScript project, and its module format: emitters that can print JavaScript directly set `javascript`. */
  readonly javascript?: 'module' | 'commonjs';
}

/** One generator for one stack. Adding a stack = one file in targets/ + one line in registry.ts. */
export interface ScaffoldTarget {
  id: string;
  /** For messages: which stacks it serves, e.g. "Express + PostgreSQL (TypeScript or JavaScript)". */
  label: string;
  supports(stack: StackDesign): boolean;
  /** Files relative to the scaffold folder (the caller prefixes options.dir). */
  files(model: DesignModel, context?: TargetContext): ScaffoldFile[];
  /** Which generated file (relative path) and which part of it the document embeds per excerpt. */
  excerpts(model: DesignModel, files: readonly ScaffoldFile[]): Partial<Record<ExcerptId, CodeExcerpt>>;
}
