import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT, copyFixture, runCli } from './cli.js';

// Cold start: a command loads the heavy libraries only when it needs them (`--help` none of them).
const HOOKS = pathToFileURL(path.join(import.meta.dirname, 'recordImports.mjs')).href;
const REGISTER = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(HOOKS)});`;
const logs = await mkdtemp(path.join(os.tmpdir(), 'ib-imports-'));
const dirs = [logs];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function importsOf(name: string, args: string[]): Promise<string[]> {
  const log = path.join(logs, `${name}.log`);
  const run = await runCli(args, { IB_IMPORT_LOG: log }, ['--import', REGISTER]);
  expect(run.code, run.stderr).toBe(0);
  return (await readFile(log, 'utf8')).split('\n').filter(Boolean);
}

const HEAVY = ['ts-morph', 'typescript', 'prettier', 'beautiful-mermaid', 'elkjs', 'handlebars', '@inquirer', 'htmlparser2'];
const packages = (urls: string[]) => new Set(urls.flatMap((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? []));
const ownModules = (urls: string[]) => urls.flatMap((url) => /\/dist\/(.+)\.js$/.exec(url)?.[1] ?? []);

describe('cold start', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('--version loads no package, --help and every command\'s --help no package but commander (not even zod)', async () => {
    expect([...packages(await importsOf('version', ['--version']))]).toEqual([]);
    for (const command of ['', 'init', 'generate', 'inspect', 'verify', 'audit']) {
      const args = command ? [command, '--help'] : ['--help'];
      expect([...packages(await importsOf(`only-commander-${command}`, args))], args.join(' ')).toEqual(['commander']);
    }
  });

  it('--help and generate --help load no heavy library and none of the rendering code', async () => {
    for (const args of [['--help'], ['generate', '--help']]) {
      const urls = await importsOf(args.join('-'), args);
      expect([...packages(urls)].filter((name) => HEAVY.some((heavy) => name.startsWith(heavy))), args.join(' ')).toEqual([]);
      expect(ownModules(urls).filter((file) => /^(render|diagrams|scaffold|inspect|model|verify)\//.test(file)), args.join(' ')).toEqual([]);
    }
  });

  it('generate from a config never loads the code inspector or the prompt library', async () => {
    const dir = await copyFixture('express-stripe-payments');
    dirs.push(dir);
    const loaded = packages(await importsOf('generate', ['generate', '--cwd', dir, '--date', '2026-12-02', '--quiet']));
    expect(loaded.has('ts-morph')).toBe(false);
    expect([...loaded].some((name) => name.startsWith('@inquirer'))).toBe(false);
  });
});
