import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectStack } from '../../src/inspect/stack/detectStack.js';
import type { Manifest } from '../../src/inspect/stack/readManifest.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';
import { runBuiltCli } from './runBuiltCli.js';
import { listFiles, projectFrom, readConfig } from './wizardHarness.js';

const HINTS = { tsFiles: 1, jsFiles: 0, hasTsconfig: true, lockfileManager: 'npm' } as const;
const manifest = (dependencies: string[]): Manifest => ({ dependencies: new Set(dependencies), scripts: [], workspaces: [] });

describe('libSQL is its own database, not SQLite', () => {
  it('@libsql/client (and the libSQL adapters) read as libsql; better-sqlite3 and sqlite3 stay sqlite', () => {
    expect(detectStack([manifest(['hono', 'drizzle-orm', '@libsql/client'])], HINTS).databases).toEqual(['libsql']);
    expect(detectStack([manifest(['@prisma/client', '@prisma/adapter-libsql'])], HINTS).databases).toEqual(['libsql']);
    expect(detectStack([manifest(['better-sqlite3'])], HINTS).databases).toEqual(['sqlite']);
    expect(detectStack([manifest(['sqlite3'])], HINTS).databases).toEqual(['sqlite']);
  });
});

/** Strips an HTML document to its words: what a reader of the design sees. */
function textOf(html: string): string {
  const body = html.replace(/<!--[\s\S]*?-->/g, '').replace(/<(style|script)[^>]*>[\s\S]*?<\/\1>/g, '');
  return body
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

// The shape of w3cj/hono-open-api-starter: Hono, drizzle-orm/libsql on @libsql/client, drizzle-kit's turso dialect,
// DATABASE_URL and DATABASE_AUTH_TOKEN (a remote Turso database every instance shares).
describe('init --yes on a Hono + drizzle-orm/libsql project', { timeout: CLI_TEST_TIMEOUT }, () => {
  let cwd = '';
  afterAll(async () => {
    if (cwd) await rm(cwd, { recursive: true, force: true });
  });

  it('chooses libSQL, writes the libSQL store, and the document says what that store does', async () => {
    cwd = await projectFrom('hono-libsql');
    const run = await runBuiltCli(['init', '--yes', '--cwd', cwd], { CI: '1' });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const config = await readConfig(cwd);
    expect(config['stack']).toMatchObject({ framework: 'hono', database: 'libsql' });

    const files = await listFiles(path.join(cwd, 'src/idempotency'));
    expect(files).toEqual(expect.arrayContaining(['libsqlStore.ts', 'pool.ts', 'cleanup.ts', 'cleanup-job.ts', 'migrations/001_create_idempotency_store.sql']));
    expect(files).not.toContain('sqliteStore.ts');
    const pool = await readFile(path.join(cwd, 'src/idempotency/pool.ts'), 'utf8');
    expect(pool).toContain("from '@libsql/client'");
    expect(pool).toContain('DATABASE_AUTH_TOKEN');
    const job = await readFile(path.join(cwd, 'src/idempotency/cleanup-job.ts'), 'utf8');
    expect(job).toContain('stepTable: POLICY.stepTable');
    expect(job).toContain('pool.close();');

    const text = textOf(await readFile(path.join(cwd, 'docs/idempotency-design.html'), 'utf8'));
    expect(text).toContain('libSQL (Turso)');
    // The claim as libsqlStore.ts makes it, the clock it uses, and why there is no transactional mode.
    expect(text).toContain('one write batch (one round trip)');
    expect(text).toContain("on the libSQL server's clock");
    expect(text).toContain('The libSQL store keeps no transaction open across the handler');
    expect(text).toContain('a throwaway local file opened through @libsql/client');
    // Nothing of the embedded SQLite store, whose facts would be false of a remote database.
    for (const wrong of ['better-sqlite3', 'opens the database file', 'journal_mode', 'busy_timeout = 0', 'has no transaction that could include', 'SQLite statements run synchronously'])
      expect(text, wrong).not.toContain(wrong);
  });
});
