import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT, copyFixture, runCli } from './cli.js';

// A Prisma project owns schema.prisma: generate adds the store's models to it only while they are absent, only on top
// of the exact text it read, and never takes the file over (no manifest entry), so the user's later edits stay theirs.
const SCHEMA = `generator client {
  provider = "prisma-client-js"
}

datasource db {
  provider = "postgresql"
  url      = env("DATABASE_URL")
}

model User {
  id    Int    @id @default(autoincrement())
  email String @unique
}
`;

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function prismaProject(): Promise<string> {
  const dir = await copyFixture('express-stripe-payments', (raw) => {
    raw['split'] = 'never';
  });
  dirs.push(dir);
  await mkdir(path.join(dir, 'prisma'));
  await writeFile(path.join(dir, 'prisma/schema.prisma'), SCHEMA);
  const pkg = { name: 'prisma-app', type: 'module', dependencies: { express: '^5.1.0', pg: '^8.13.0', stripe: '^17.0.0', '@prisma/client': '^6.19.0' }, devDependencies: { prisma: '^6.19.0', typescript: '^5.9.0', vitest: '^4.0.0' } };
  await writeFile(path.join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  return dir;
}

const generate = (dir: string, ...flags: string[]) => runCli(['generate', '--cwd', dir, '--date', '2026-12-03', ...flags]);
const schemaOf = (dir: string) => readFile(path.join(dir, 'prisma/schema.prisma'), 'utf8');

describe('generate in a Prisma project', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('appends the models to schema.prisma once, keeps the user\'s text, and leaves the file untracked', async () => {
    const dir = await prismaProject();
    const dry = await generate(dir, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(await schemaOf(dir)).toBe(SCHEMA);

    const first = await generate(dir);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('updated   prisma/schema.prisma');
    const schema = await schemaOf(dir);
    expect(schema.startsWith(SCHEMA)).toBe(true);
    expect(schema.match(/@@map\("idempotency_store"\)/g)).toHaveLength(1);
    const manifest = JSON.parse(await readFile(path.join(dir, '.idempotency-builder/manifest.json'), 'utf8')) as { files: Array<{ path: string }> };
    expect(manifest.files.map((f) => f.path)).not.toContain('prisma/schema.prisma');
    expect(manifest.files.map((f) => f.path)).toContain('prisma/migrations/20260101000000_idempotency/migration.sql');

    // Again: nothing changes, and --check agrees.
    const second = await generate(dir);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).not.toContain('updated');
    expect(await schemaOf(dir)).toBe(schema);
    expect((await generate(dir, '--check')).code).toBe(0);

    // The user edits their schema: their edit stays and the models are not added twice.
    const edited = `${schema}\nmodel Order {\n  id Int @id\n}\n`;
    await writeFile(path.join(dir, 'prisma/schema.prisma'), edited);
    const third = await generate(dir);
    expect(third.code, third.stderr).toBe(0);
    expect(await schemaOf(dir)).toBe(edited);
  });
});
