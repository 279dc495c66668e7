import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import { generateScaffold } from '../../src/scaffold/index.js';

const run = promisify(execFile);
export const ROOT = path.resolve(import.meta.dirname, '../..');
const NOW = new Date('2026-01-15T00:00:00Z');

export interface FixtureCopy {
  dir: string;
  /** The generated migration, to create the store's tables in a throwaway schema. */
  migration: string;
  remove(): Promise<void>;
}

/**
 * A fresh copy of fixtures/apply/<name> under .tmp (inside the repo, so express/pg/stripe resolve from our
 * node_modules as they would from the app's), with the scaffolding `generate` would write. The document is not
 * rendered: apply reads only the config and the scaffold folder.
 */
export async function copyFixture(name: string): Promise<FixtureCopy> {
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', `apply-${name}-`));
  await cp(path.join(ROOT, 'fixtures/apply', name), dir, { recursive: true });
  const { config } = await loadConfig(dir);
  const model = buildDesign(config, undefined, { now: NOW });
  const files = generateScaffold(model, { dir: config.scaffold === false ? 'src/idempotency' : config.scaffold.dir });
  for (const file of files) {
    await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true });
    await writeFile(path.join(dir, file.path), file.contents);
  }
  const ddl = files.find((file) => file.role === 'ddl');
  return { dir, migration: ddl ? await readFile(path.join(dir, ddl.path), 'utf8') : '', remove: () => rm(dir, { recursive: true, force: true }) };
}

/** tsc -p on the app (type-check and emit to dist/): '' when it compiled cleanly, else the diagnostics. */
export async function compile(dir: string): Promise<string> {
  try {
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

/** The app's own tests (node:test on the emitted JavaScript), as its `npm test` runs them. */
export async function runOwnTests(dir: string): Promise<{ ok: boolean; output: string }> {
  // A fixture whose script force-exits (its pools would hold the process open for their idle timeout) does so here too.
  const script = (JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { scripts?: { test?: string } }).scripts?.test ?? '';
  const flags = script.includes('--test-force-exit') ? ['--test-force-exit'] : [];
  try {
    const { stdout } = await run(process.execPath, ['--test', ...flags, 'dist/test/'], { cwd: dir, env: { ...process.env, NODE_ENV: 'test' } });
    return { ok: true, output: stdout };
  } catch (error) {
    return { ok: false, output: String((error as { stdout?: string }).stdout ?? error) };
  }
}

/** Every file under `dir` (dist/ and node_modules/ aside) with its text: equal snapshots mean nothing was written. */
export async function snapshotTree(dir: string): Promise<Record<string, string>> {
  const { readdir } = await import('node:fs/promises');
  const out: Record<string, string> = {};
  const walk = async (rel: string): Promise<void> => {
    for (const entry of await readdir(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (entry.name !== 'dist' && entry.name !== 'node_modules') await walk(child);
      } else out[child] = await readFile(path.join(dir, child), 'utf8');
    }
  };
  await walk('');
  return out;
}
