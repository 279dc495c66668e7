import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { renderConfig } from '../helpers/generateInto.js';

/** nextjs/saas-starter's shape: every protected action is a Server Action, so no header and no HTTP response. */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the document of a Next.js app whose actions are Server Actions', () => {
  it('names them, says how their key is checked and what a repeat gets (the stored result or the same redirect)', async () => {
    const result = await renderConfig(
      {
        actions: [{ name: 'signUp', trigger: 'http', route: 'POST /signUp', transport: 'server-action', scope: 'global', significantFields: ['email'] }],
        stack: { language: 'typescript', framework: 'nextjs', database: 'postgres', testFramework: 'vitest' },
        concurrency: 'multi-instance',
        retention: '24h',
        detectionLatency: '50ms',
        scaffold: false,
      },
      { format: 'md' },
    );
    dirs.push(result.dir);
    expect(result.text).toContain('Next.js Server Actions on PostgreSQL');
    expect(result.text).toContain('A Server Action (signUp) has no header: its key is its first argument');
    expect(result.text).toContain('one that ends in redirect() is stored as that redirect, so a repeat sends the client to the same place without running');
  });
});
