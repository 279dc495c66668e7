import { Command } from 'commander';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.js';
import type { Inspection } from '../inspect/types.js';
import { createLogger } from '../logger.js';

export interface InspectFlags {
  json?: boolean;
  cwd?: string;
}

export function inspectCommand(): Command {
  return new Command('inspect')
    .description('List what needs idempotency: mutating endpoints, payment calls, webhooks, consumers, cron jobs, and existing protection.')
    .argument('[dir]', 'project directory to inspect (same as --cwd)')
    .option('--cwd <dir>', 'project root, as for the other commands', undefined)
    .option('--json', 'print { root, stack, findings, warnings } as JSON')
    .action(async (dir: string | undefined, flags: InspectFlags) => {
      await runInspect(projectDir(dir, flags.cwd), flags);
    });
}

/** `inspect DIR` and `inspect --cwd DIR` are the same; both at once must agree rather than one silently winning. */
function projectDir(dir: string | undefined, cwd: string | undefined): string {
  if (dir !== undefined && cwd !== undefined && path.resolve(dir) !== path.resolve(cwd)) {
    throw new UserError(`inspect got two folders: ${dir} and --cwd ${cwd}.`, 'Pass the project folder once, either as DIR or with --cwd.');
  }
  return dir ?? cwd ?? '.';
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
