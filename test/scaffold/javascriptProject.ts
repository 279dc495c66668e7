import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { generate, type GenerateResult } from '../../src/generate.js';
import type { ModuleType } from '../../src/scaffold/index.js';
import { ROOT } from './generateInto.js';

export const run = promisify(execFile);
export const SCAFFOLD_DIR = 'src/idempotency';

export interface JavaScriptProject {
  dir: string;
  result: GenerateResult;
  /** Project-relative paths of every file under the scaffold folder. */
  files: string[];
}

/**
 * A plain JavaScript project (package.json with or without "type": "module") under .tmp, so express, pg and vitest
 * resolve from this repository's node_modules as they would from the user's; then the real `generate` writes into it.
 */
export async function generateJavaScriptProject(fixture: string, moduleType: ModuleType): Promise<JavaScriptProject> {
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', `js-${moduleType}-`));
  const pkg = { name: 'orders-api', private: true, ...(moduleType === 'module' ? { type: 'module' } : {}) };
  await writeFile(path.join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  const config = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs', `${fixture}.json`), 'utf8')) as Record<string, unknown>;
  delete config['$schema'];
  await writeFile(path.join(dir, 'idempotency.config.json'), JSON.stringify(config, null, 2));
  // Its own vitest config, so vitest does not pick up this repository's (which only includes test/).
  await writeFile(path.join(dir, 'vitest.config.mjs'), "export default { test: { include: ['src/**/*.test.js'], testTimeout: 30000 } };\n");
  const result = await generate({ cwd: dir, date: '2026-01-15' });
  const files = (await readdir(path.join(dir, SCAFFOLD_DIR), { recursive: true })).map((name) => `${SCAFFOLD_DIR}/${name.split(path.sep).join('/')}`);
  return { dir, result, files: files.sort() };
}

/** Starts `node <script>` in the project; resolves once it prints its port. */
export async function startApp(dir: string, script: string, env: Record<string, string>): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [script], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`app did not start:\n${output}`)), 15_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`app exited with ${code}:\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A throwaway schema holding the project's generated migration; the URL pins search_path to it. */
export async function createProjectSchema(databaseUrl: string, dir: string, label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const pg = (await import('pg')).default;
  const name = `idem_${label}_${Math.random().toString(36).slice(2, 12)}`;
  const url = `${databaseUrl}${databaseUrl.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${name}`)}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${name}`);
  await admin.end();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(await readFile(path.join(dir, SCAFFOLD_DIR, 'migrations/001_create_idempotency_store.sql'), 'utf8'));
  await client.end();
  return {
    url,
    async drop() {
      const dropper = new pg.Client({ connectionString: databaseUrl });
      await dropper.connect();
      await dropper.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await dropper.end();
    },
  };
}
