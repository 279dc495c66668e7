import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatOptions } from '../../src/emit/format.js';
import type { DesignModel } from '../../src/model/types.js';
import { findTarget, referenceTarget, REFERENCE_PROFILE, type ModuleType, type ProjectProfile } from '../../src/scaffold/index.js';
import { usePrecompiledTable } from '../../src/scaffold/javascript/precompiled.js';
import { toJavaScriptFiles } from '../../src/scaffold/javascript/toJavaScriptFiles.js';
import { loadTypeScript } from '../../src/scaffold/javascript/transpile.js';
import { applyProfile } from '../../src/scaffold/profile/applyProfile.js';
import { toBareBuiltins } from '../../src/scaffold/profile/bareBuiltins.js';
import { bindSandboxGlobals, pinJestEnvironment } from '../../src/scaffold/profile/jestSandbox.js';
import type { ScaffoldFile, TargetContext } from '../../src/scaffold/types.js';
import { modelFor, ROOT } from './generateInto.js';

// An old Jest's profile (Jest 26: bare builtins and sandbox globals; Jest 27: sandbox globals) on a JavaScript
// project's house-style files is read without the compiler (src/scaffold/profile/javascriptProfile.ts), so a cold
// generate loads neither TypeScript nor prettier (#20). What it writes must be byte for byte what the compiler's
// reading and prettier gave. The build's precompiled tables (dist) are used, so the files are the ones a generate
// prints directly; without a build the test is skipped.

const DIST = path.join(ROOT, 'dist/scaffold/javascript');
const built = existsSync(path.join(DIST, 'precompiled.json'));
if (!built) console.warn('old-Jest JavaScript profile test skipped: run `npm run build` first (it reads the precompiled tables)');

const STORES = ['postgres', 'mysql', 'sqlite', 'redis', 'dynamodb'] as const;
const FRAMEWORKS = ['express', 'koa', 'hono', 'nextjs', 'none', 'nestjs', 'fastify'] as const;
const stack = (raw: Record<string, unknown>) => raw.stack as Record<string, unknown>;
const jestJavaScript = (extra: Record<string, unknown> = {}) => (raw: Record<string, unknown>) => void Object.assign(stack(raw), { language: 'javascript', testFramework: 'jest', ...extra });

const CASES = [
  ...readdirSync(path.join(ROOT, 'fixtures/configs'))
    .filter((name) => name.endsWith('.json'))
    .map((name) => ({ label: name.slice(0, -5), fixture: name.slice(0, -5), patch: jestJavaScript() })),
  ...STORES.map((database) => ({ label: `express-stripe-payments on ${database}`, fixture: 'express-stripe-payments', patch: jestJavaScript({ database }) })),
  ...FRAMEWORKS.map((framework) => ({ label: `express-stripe-payments with ${framework}`, fixture: 'express-stripe-payments', patch: jestJavaScript({ framework }) })),
  ...['bullmq', 'kafka', 'rabbitmq', 'sqs', 'nats'].map((broker) => ({ label: `worker-cron-no-payments with ${broker}`, fixture: 'worker-cron-no-payments', patch: jestJavaScript({ broker }) })),
];

const PROFILES: Array<{ label: string; traits: Partial<ProjectProfile> }> = [
  { label: 'Jest 26', traits: { bareBuiltins: true, jestSandbox: true } },
  { label: 'Jest 27', traits: { jestSandbox: true } },
];

/** What the profile gave before: the compiler's reading of every edited file, then prettier on it. */
async function oldPath(files: readonly ScaffoldFile[], profile: ProjectProfile): Promise<Map<string, string>> {
  const ts = loadTypeScript();
  const style = profile.moduleSystem === 'commonjs' ? 'require' : 'import';
  const out = new Map<string, string>();
  for (const file of files) {
    let contents = file.contents;
    if (file.path.endsWith('.js')) {
      if (profile.jestSandbox) contents = bindSandboxGlobals(ts, contents, file.path, style);
      if (profile.bareBuiltins) contents = toBareBuiltins(ts, contents, file.path);
    } else if (file.path.endsWith('.md') && profile.bareBuiltins) {
      contents = contents.replace(/```(ts|js)\n([\s\S]*?)```/g, (_block, language: string, code: string) => `\`\`\`${language}\n${toBareBuiltins(ts, code, `README.${language}`)}\`\`\``);
    }
    const formatted = file.formatted && contents === file.contents;
    if (file.role === 'tests' && /\.test\.js$/.test(file.path)) contents = pinJestEnvironment(contents);
    out.set(file.path, formatted || !/\.js$/.test(file.path) ? contents : await prettier.format(contents, formatOptions(file.path)));
  }
  return out;
}

async function expectOldPathBytes(model: DesignModel, profile: ProjectProfile): Promise<string[]> {
  const target = findTarget(model.stack) ?? referenceTarget(model.stack)!;
  const moduleType: ModuleType = profile.moduleSystem === 'esm' ? 'module' : 'commonjs';
  const context: TargetContext = { testRunner: 'jest', testModuleSystem: profile.moduleSystem, scaffoldDir: 'src/idempotency', javascript: moduleType };
  const javascript = toJavaScriptFiles(target.files(model, context), moduleType, { esmTests: false });
  const expected = await oldPath(javascript, profile);
  const actual = applyProfile(javascript, profile);
  for (const file of actual) {
    const contents = file.formatted || !/\.js$/.test(file.path) ? file.contents : await prettier.format(file.contents, formatOptions(file.path));
    expect(contents, `${file.path} (${moduleType})`).toBe(expected.get(file.path));
  }
  // The files printed in the house style that the profile left to prettier.
  const printed = new Set(javascript.filter((file) => file.formatted && file.path.endsWith('.js')).map((file) => file.path));
  return actual.filter((file) => printed.has(file.path) && !file.formatted).map((file) => file.path);
}

describe.skipIf(!built)("an old Jest's profile on a JavaScript project is what the compiler's reading and prettier gave", () => {
  beforeAll(() => {
    const table = new Map<string, string>();
    const read = (file: string) => Object.entries((JSON.parse(readFileSync(file, 'utf8')) as { files: Record<string, string> }).files);
    for (const [key, js] of [...read(path.join(DIST, 'precompiled.json')), ...read(path.join(DIST, 'jest-profiles.json'))]) table.set(key, js);
    for (const name of readdirSync(path.join(DIST, 'suites'))) for (const [key, js] of read(path.join(DIST, 'suites', name))) table.set(key, js);
    usePrecompiledTable(table);
  });
  afterAll(() => usePrecompiledTable(undefined));

  describe.each(PROFILES)('$label', ({ traits }) => {
    it.each(CASES)('$label', async ({ fixture, patch }) => {
      const model = await modelFor(fixture, patch);
      for (const moduleSystem of ['commonjs', 'esm'] as const) {
        const profile: ProjectProfile = { ...REFERENCE_PROFILE, language: 'javascript', moduleSystem, testRunner: 'jest', ...traits };
        // The printed files stay printed: prettier is not needed for any of them.
        expect(await expectOldPathBytes(model, profile), `${moduleSystem}: files left to prettier`).toEqual([]);
      }
    });
  });
});
