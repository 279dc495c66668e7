import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { modelFor } from './generateInto.js';
import { DATABASE_URL, postgresSkipReason } from './harness.js';
import { bin, generateProfileProject, PROFILE_CASES, TSC } from './profileCases.js';

const run = promisify(execFile);
const skip = await postgresSkipReason();
if (skip) console.warn(`profile matrix against PostgreSQL skipped: ${skip}`);

/**
 * Each profile once: a project with that tsconfig/package.json under .tmp (so packages resolve from this repo's
 * node_modules, as from the user's), the Express + PostgreSQL scaffold generated for the profile readProjectProfile
 * reads, compiled by tsc under that tsconfig, then the generated suite run with the project's runner.
 */
describe.each(PROFILE_CASES)('profile $label', (profileCase) => {
  const dirs: string[] = [];
  afterAll(async () => {
    if (!process.env.KEEP_PROFILE_PROJECTS) for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('is read from the project, compiles under its tsconfig and passes its suite with its runner', { timeout: 240_000 }, async () => {
    const model = await modelFor(profileCase.fixture ?? 'express-stripe-payments', (raw) => {
      Object.assign(raw.stack as Record<string, unknown>, { language: profileCase.language, testFramework: profileCase.runner });
    });
    const { dir, profile, files } = await generateProfileProject(profileCase, model);
    dirs.push(dir);
    expect(profile).toMatchObject({ ...profileCase.expected, testRunner: profileCase.runner });

    const suites = files.filter((file) => file.role === 'tests');
    if (profileCase.runner !== 'vitest') for (const suite of suites) expect(suite.contents, suite.path).not.toContain('vitest');
    if (profile.moduleSystem === 'commonjs') expect(files.map((file) => file.contents).join('\n')).not.toContain('import.meta');
    // Without esModuleInterop a default import compiles to pg_1.default, which is undefined at run time.
    if (profile.language === 'typescript' && !profile.defaultImportInterop) expect(files.find((file) => file.path.endsWith('/pool.ts'))!.contents).toContain("import pg = require('pg');");
    if (profile.relativeImports === 'extensionless') expect(files.find((file) => file.path.endsWith('/index.ts'))!.contents).toContain("from './core';");

    const typeCheck = (project: string) =>
      run(process.execPath, [TSC, '-p', project], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).then(
        () => '',
        (error: { stdout?: string }) => String(error.stdout),
      );
    if (profileCase.language === 'typescript') expect(await typeCheck(dir)).toBe('');
    else {
      // The JSDoc types hold for every generated file, the suites included, as a JavaScript user's editor checks
      // them: tsc --checkJs --strict in the project's module format (javascriptJsDoc.test.ts checks the runtime files
      // of more stacks).
      const commonjs = profile.moduleSystem === 'commonjs';
      const checkJs = {
        compilerOptions: {
          allowJs: true,
          checkJs: true,
          noEmit: true,
          strict: true,
          module: commonjs ? 'commonjs' : 'nodenext',
          moduleResolution: commonjs ? 'node10' : 'nodenext',
          target: 'es2022',
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [bin('@types')],
        },
        include: ['src/**/*.js'],
      };
      await writeFile(path.join(dir, 'tsconfig.checkjs.json'), JSON.stringify(checkJs, null, 2));
      expect(files.some((file) => file.path.endsWith('.test.js'))).toBe(true);
      expect(await typeCheck('tsconfig.checkjs.json')).toBe('');
    }
    if (skip) return;
    const result = await run(process.execPath, profileCase.command(dir), {
      cwd: dir,
      env: { ...process.env, DATABASE_URL, CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
    }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`generated ${profileCase.runner} suite failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(output).not.toMatch(/\b[1-9]\d* (failed|failing)\b|# fail [1-9]/);
    expect(output).toMatch(/\b[1-9]\d* pass(ed|ing)?\b|# pass [1-9]/);
  });
});
