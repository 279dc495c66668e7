import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateScaffold, readProjectProfile, REFERENCE_PROFILE } from '../../src/scaffold/index.js';
import { missingDependencies } from '../../src/scaffold/placement/installCommands.js';
import { generateAndCompile, modelFor, ROOT } from './generateInto.js';
import { postgresSkipReason, runGeneratedSuite } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`NestJS-on-Fastify suite against PostgreSQL skipped: ${skip}`);

const NEST_COMPILER_OPTIONS = { experimentalDecorators: true, emitDecoratorMetadata: true };
const FIXTURE = 'nestjs-adyen-saga';
const FASTIFY_PROFILE = { ...REFERENCE_PROFILE, httpPlatform: 'fastify' as const };

/**
 * A NestJS app on @nestjs/platform-fastify (typeofweb/scribium-backend's shape): the interceptor gets a FastifyReply,
 * which has header() but no setHeader(), and the project has neither Express nor its types. The scaffold must not
 * ask for them, and the suite must boot Nest on FastifyAdapter and pass there.
 */
describe('NestJS on the Fastify platform', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('reads the platform from package.json, and from main.ts when both platforms are declared', async () => {
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    const dir = await mkdtemp(path.join(ROOT, '.tmp', 'nest-platform-'));
    dirs.push(dir);
    const profileOf = async (dependencies: Record<string, string>, main?: string) => {
      await writeFile(path.join(dir, 'package.json'), JSON.stringify({ dependencies }));
      await mkdir(path.join(dir, 'src'), { recursive: true });
      await rm(path.join(dir, 'src/main.ts'), { force: true });
      if (main) await writeFile(path.join(dir, 'src/main.ts'), main);
      return (await readProjectProfile({ root: dir, dir: 'src/idempotency', language: 'typescript', testFramework: 'vitest' })).httpPlatform;
    };
    const core = { '@nestjs/core': '^10.0.0', '@nestjs/common': '^10.0.0' };
    expect(await profileOf({ ...core, '@nestjs/platform-fastify': '^10.0.0' })).toBe('fastify');
    expect(await profileOf({ ...core, '@nestjs/platform-express': '^10.0.0' })).toBeUndefined();
    const both = { ...core, '@nestjs/platform-express': '^10.0.0', '@nestjs/platform-fastify': '^10.0.0' };
    expect(await profileOf(both, 'const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter());\n')).toBe('fastify');
    expect(await profileOf(both, 'const app = await NestFactory.create(AppModule);\n')).toBeUndefined();
  });

  it('asks for no Express platform and no Express types', async () => {
    const files = generateScaffold(await modelFor(FIXTURE), { dir: 'src/idempotency', profile: FASTIFY_PROFILE });
    const declared = new Set(['@nestjs/common', '@nestjs/core', '@nestjs/platform-fastify', 'rxjs', 'reflect-metadata']);
    const missing = missingDependencies(files, declared, true);
    expect([...missing.runtime, ...missing.dev].filter((name) => /express/.test(name))).toEqual([]);
    const suite = files.find((file) => file.path === 'src/idempotency/idempotency.test.ts')!.contents;
    expect(suite).toContain('new FastifyAdapter()');
  });

  it.skipIf(skip !== undefined)('compiles and passes its own generated suite on Nest + Fastify against the real PostgreSQL', { timeout: 240_000 }, async () => {
    const model = await modelFor(FIXTURE, (raw) => ((raw.stack as Record<string, unknown>).testFramework = 'vitest'));
    const generated = await generateAndCompile(model, 'nestjs-fastify', NEST_COMPILER_OPTIONS, FASTIFY_PROFILE);
    dirs.push(generated.dir);
    expect(generated.tscOutput).toBe('');
    const stdout = await runGeneratedSuite(generated.dir, { files: ['src/idempotency/idempotency.test.ts'] });
    expect(stdout).not.toMatch(/skipped/);
  });
});
