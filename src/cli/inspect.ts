import { Command } from 'commander';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.js';
import type { Inspection } from '../inspect/types.js';
import { createLogger } from '../logger.js';

export interface InspectFlags {
  json?: boolean;
}

export function inspectCommand(): Command {
  return new Command('inspect')
    .description('List what needs idempotency: mutating endpoints, payment calls, webhooks, consumers, cron jobs, and existing protection.')
    .argument('[dir]', 'project directory to inspect', '.')
    .option('--json', 'print { root, stack, findings, warnings } as JSON')
    .action(async (dir: string, flags: InspectFlags) => {
      await runInspect(dir, flags);
    });
}

export async function runInspect(dir: string, flags: InspectFlags = {}): Promise<Inspection> {
  const root = path.resolve(dir);
  const info = await stat(root).catch(() => undefined);
  if (!info) throw new UserError(`${dir} does not exist.`, 'Pass the path of a project directory, e.g. `idempotency-builder inspect ./my-service`.');
  if (!info.isDirectory()) throw new UserError(`${dir} is not a directory.`, 'Pass the project directory, not a file inside it.');

  const log = createLogger();
  // ts-morph is heavy; loading it here keeps `--help` instant.
  const [{ inspectProject }, { formatInspection }] = await Promise.all([import('../inspect/index.js'), import('../inspect/formatInspection.js')]);
  const progress = createProgress();
  const inspection = await inspectProject(root, { onProgress: progress.update }).finally(progress.done);
  if (flags.json) {
    const { root: r, stack, findings, warnings } = inspection;
    process.stdout.write(`${JSON.stringify({ root: r, stack, findings, warnings }, null, 2)}\n`);
  } else {
    process.stdout.write(formatInspection(inspection, log));
  }
  return inspection;
}

/** A one-line counter on stderr, only for humans watching a terminal (never in CI logs or pipes). */
function createProgress(): { update: (done: number, total: number) => void; done: () => void } {
  const stream = process.stderr;
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  let last = 0;
  let shown = false;
  return {
    update: (done, total) => {
      const now = Date.now();
      if (now - last < 100 && done !== total) return;
      last = now;
      shown = true;
      stream.write(`\rInspecting ${done}/${total} files…`);
    },
    done: () => {
      if (shown) stream.write('\r\u001b[2K');
    },
  };
}
