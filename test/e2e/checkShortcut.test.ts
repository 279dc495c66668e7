import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT, copyFixture, runCli } from './cli.js';

// `generate --check` with nothing changed answers from the manifest's inputs key (config text, snapshot, date, tool
// build, prettier config and package.json files) without loading the schema, the model or any renderer; every
// change the key covers, and every edited file, sends it down the full path, which reports the truth.
const HOOKS = pathToFileURL(path.join(import.meta.dirname, 'recordImports.mjs')).href;
const REGISTER = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(HOOKS)});`;
const MANIFEST = '.idempotency-builder/manifest.json';
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

const packagesLoaded = async (log: string) => new Set((await readFile(log, 'utf8')).split('\n').flatMap((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? []));

/** Runs `generate --check` and says whether it had to load the config schema (zod), i.e. took the full path. */
async function check(dir: string, ...flags: string[]): Promise<{ code: number; stdout: string; stderr: string; rendered: boolean }> {
  const logs = await mkdtemp(path.join(os.tmpdir(), 'ib-check-imports-'));
  dirs.push(logs);
  const log = path.join(logs, 'imports.log');
  const run = await runCli(['generate', '--cwd', dir, '--check', ...flags], { IB_IMPORT_LOG: log }, ['--import', REGISTER]);
  return { ...run, rendered: (await packagesLoaded(log)).has('zod') };
}

describe('generate --check shortcut', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('answers an up-to-date project from the manifest, and falls back to a full check on any change it covers', async () => {
    const dir = await copyFixture('express-stripe-payments');
    dirs.push(dir);
    const first = await runCli(['generate', '--cwd', dir, '--date', '2026-12-02', '--quiet']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(await readFile(path.join(dir, MANIFEST), 'utf8'))).toMatchObject({ inputs: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const quick = await check(dir);
    expect(quick.code, quick.stderr).toBe(0);
    expect(quick.stdout).toContain('up to date');
    expect(quick.rendered).toBe(false);
    const json = await check(dir, '--json');
    expect(json.rendered).toBe(false);
    const body = JSON.parse(json.stdout) as { document: string; stale: string[]; files: Array<{ path: string; action: string }> };
    // One file, or a folder once the document is long enough to be split.
    expect(body.document).toMatch(/^docs\/idempotency-design(?:\.html|\/)$/);
    expect(body.stale).toEqual([]);
    expect(body.files[0]?.path).toMatch(/^docs\/idempotency-design[./]/);
    expect(new Set(body.files.map((file) => file.action))).toEqual(new Set(['unchanged']));

    // Another footer date is another document.
    const dated = await check(dir, '--date', '2026-12-03');
    expect([dated.code, dated.rendered]).toEqual([1, true]);
    expect(dated.stderr).toMatch(/docs\/idempotency-design[^\s]*\.html \(differs\)/);

    // The config's text changed but not its meaning: the full path runs and finds everything unchanged.
    const configFile = path.join(dir, 'idempotency.config.json');
    const config = await readFile(configFile, 'utf8');
    await writeFile(configFile, JSON.stringify(JSON.parse(config)));
    const reformatted = await check(dir);
    expect([reformatted.code, reformatted.rendered], reformatted.stderr).toEqual([0, true]);
    await writeFile(configFile, config);

    // A prettier config beside the scaffold changes how generate would write the code.
    const prettierrc = path.join(dir, 'src/idempotency/.prettierrc');
    await writeFile(prettierrc, '{ "singleQuote": false, "printWidth": 80 }\n');
    const styled = await check(dir);
    expect([styled.code, styled.rendered]).toEqual([1, true]);
    expect(styled.stderr).toContain('src/idempotency/settings.ts (differs)');
    await rm(prettierrc);

    // A managed file edited by hand.
    const alerts = path.join(dir, 'src/idempotency/idempotency-alerts.yml');
    const original = await readFile(alerts, 'utf8');
    await writeFile(alerts, `${original}# tuned by hand\n`);
    const edited = await check(dir);
    expect([edited.code, edited.rendered]).toEqual([1, true]);
    expect(edited.stderr).toContain('src/idempotency/idempotency-alerts.yml (differs)');
    await writeFile(alerts, original);

    // A record of what `apply` wired changes the document's wiring table: the shortcut must not answer for it.
    const applyRecord = path.join(dir, '.idempotency-builder/apply.json');
    await writeFile(applyRecord, '{}\n');
    const applied = await check(dir);
    expect(applied.rendered, applied.stderr).toBe(true);
    await rm(applyRecord);
    expect((await check(dir)).rendered).toBe(false);

    // A key recorded by another build (or tampered with) is never trusted.
    const manifest = await readFile(path.join(dir, MANIFEST), 'utf8');
    await writeFile(path.join(dir, MANIFEST), manifest.replace(/"inputs": "[0-9a-f]{64}"/, `"inputs": "${'0'.repeat(64)}"`));
    const foreign = await check(dir);
    expect([foreign.code, foreign.rendered], foreign.stderr).toEqual([0, true]);
    await writeFile(path.join(dir, MANIFEST), manifest);
    expect((await check(dir)).rendered).toBe(false);
  });
});
