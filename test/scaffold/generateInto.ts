import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import type { DesignModel } from '../../src/model/types.js';
import { generateScaffold, type ProjectProfile, type ScaffoldFile } from '../../src/scaffold/index.js';

const run = promisify(execFile);
export const ROOT = path.resolve(import.meta.dirname, '../..');
const NOW = new Date('2026-01-15T00:00:00Z');

export async function modelFor(fixture: string, patch: (raw: Record<string, unknown>) => void = () => {}): Promise<DesignModel> {
  const raw = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs', `${fixture}.json`), 'utf8')) as Record<string, unknown>;
  patch(raw);
  return buildDesign(parseConfig(JSON.stringify(raw)), undefined, { now: NOW });
}

export interface Generated {
  dir: string;
  /** Folder of the emitted JavaScript (same layout as the scaffold dir). */
  outDir: string;
  files: ScaffoldFile[];
  /** tsc's diagnostics; empty when the generated code compiled cleanly. */
  tscOutput: string;
  /** How a project loads the emitted modules; default 'esm' (the reference profile). */
  format?: 'esm' | 'commonjs';
}

/**
 * Writes the scaffolding into a fresh folder under .tmp (inside the repo, so express/pg/prom-client resolve from our
 * node_modules the way they would from the user's), then type-checks it strictly and emits JavaScript. Extra compiler
 * options are what a framework asks of the user's tsconfig (NestJS: experimentalDecorators, emitDecoratorMetadata).
 */
export async function generateAndCompile(
  model: DesignModel,
  label: string,
  compilerOptions: Record<string, unknown> = {},
  /** The project profile the scaffold is written for (default: the reference profile). */
  profile?: ProjectProfile,
  /** Files of the project's own beside the scaffold (path under the project → text), compiled with it. */
  extraFiles: Readonly<Record<string, string>> = {},
): Promise<Generated> {
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', `scaffold-${label}-`));
  const files = generateScaffold(model, { dir: 'src/idempotency', ...(profile ? { profile } : {}) });
  for (const file of files) {
    const target = path.join(dir, file.path);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, file.contents);
  }
  for (const [file, text] of Object.entries(extraFiles)) await writeFile(path.join(dir, file), text);
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noUncheckedIndexedAccess: true,
      esModuleInterop: true,
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [path.join(ROOT, 'node_modules/@types')],
      outDir: 'dist',
      rootDir: 'src',
      ...compilerOptions,
    },
    include: ['src'],
  };
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  // Its own config, so vitest does not pick up this repository's (which only includes test/).
  await writeFile(path.join(dir, 'vitest.config.mjs'), "export default { test: { include: ['src/**/*.test.ts'], testTimeout: 30000 } };\n");
  let tscOutput = '';
  try {
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir });
  } catch (error) {
    tscOutput = String((error as { stdout?: string }).stdout ?? error);
  }
  return { dir, outDir: path.join(dir, 'dist/idempotency'), files, tscOutput };
}
