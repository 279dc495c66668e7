import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach } from 'vitest';
import { MOVED_WRITES } from '../../src/apply/claimWrites.js';
import { runApply } from '../../src/cli/apply.js';
import { copyFixture, type FixtureCopy } from './fixtureApp.js';

/**
 * Copies of a claim-writes fixture whose notes route is replaced, each removed after its test: `variant(text)` writes
 * `text` as src/routes/notes.ts (with `files` beside it, and the action's `mode` when given) and points the action's
 * source at the route's `notesRouter.post(` line. Call inside a describe.
 */
export function notesVariants(fixture: string): (text: string, options?: { mode?: string; files?: Record<string, string> }) => Promise<FixtureCopy> {
  const copies: FixtureCopy[] = [];
  afterEach(async () => {
    for (const copy of copies.splice(0)) await copy.remove();
  });
  return async (text, options = {}) => {
    const copy = await copyFixture(fixture);
    copies.push(copy);
    for (const [file, contents] of Object.entries({ ...options.files, 'src/routes/notes.ts': text })) {
      await mkdir(path.dirname(path.join(copy.dir, file)), { recursive: true });
      await writeFile(path.join(copy.dir, file), contents);
    }
    const line = text.split('\n').findIndex((l) => l.startsWith('notesRouter.post(')) + 1;
    const configFile = path.join(copy.dir, 'idempotency.config.json');
    const config = JSON.parse(await readFile(configFile, 'utf8')) as { actions: Array<Record<string, unknown>> };
    config.actions[0]!['source'] = `src/routes/notes.ts:${line}`;
    if (options.mode) config.actions[0]!['mode'] = options.mode;
    await writeFile(configFile, JSON.stringify(config, null, 2));
    return copy;
  };
}

/** apply's plan for a variant (a dry run): the notes route as it would be, whether writes moved, and the lease-mode steps. */
export async function plannedMove(dir: string) {
  const result = await runApply({ cwd: dir, dryRun: true, quiet: true }, { interactive: false });
  const routes = result.changes.find((c) => c.path === 'src/routes/notes.ts')?.after ?? '';
  return { result, routes, moved: result.edits.some((e) => e.summary.startsWith(MOVED_WRITES)), steps: result.manual.map((m) => m.reason).filter((r) => r.includes('lease mode')) };
}
