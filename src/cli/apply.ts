import { Command } from 'commander';
import path from 'node:path';
import { FindingsError, UserError } from '../errors.js';
import type { ApplyPreview, ApplyResult } from '../apply/index.js';
import type { Prompter } from '../questions/prompter.js';
import { createLogger, type Logger } from '../logger.js';
import type { CliContext } from './commands.js';

export interface ApplyFlags {
  cwd?: string;
  config?: string;
  action?: string;
  dryRun?: boolean;
  diff?: boolean;
  yes?: boolean;
  interactive?: boolean;
  json?: boolean;
  quiet?: boolean;
}

export interface ApplyDeps {
  /** Tests inject a scripted prompter; otherwise the inquirer one is loaded when a question is asked. */
  prompter?: Prompter;
  interactive?: boolean;
}

export function applyCommand(context: CliContext = {}): Command {
  return new Command('apply')
    .description('Wire the generated protection into your own code: shows the diff, writes only when confirmed or with --yes.')
    .option('--cwd <dir>', 'project root', '.')
    .option('--config <file>', 'config file, relative to the project root', 'idempotency.config.json')
    .option('--action <name>', 'only this action')
    .option('--dry-run', 'print the planned edits and manual steps; write nothing')
    .option('--diff', 'print the unified diff; write nothing')
    .option('--yes', 'write without asking')
    .option('--interactive', 'ask even when CI is set or the terminal check fails')
    .option('--json', 'print the result as JSON')
    .option('--quiet', 'print only warnings and errors')
    .action(async (flags: ApplyFlags) => {
      await runApply(flags, {}, context);
    });
}

function decideInteractive(flags: ApplyFlags, deps: ApplyDeps): boolean {
  if (deps.interactive !== undefined) return deps.interactive;
  if (flags.interactive) return true;
  if (process.env['CI'] !== undefined && process.env['CI'] !== '') return false;
  return Boolean(process.stdin.isTTY && process.stdout.isTTY);
}

export async function runApply(flags: ApplyFlags, deps: ApplyDeps = {}, context: CliContext = {}): Promise<ApplyResult> {
  const log = createLogger({ quiet: flags.quiet || flags.json });
  const { applyWiring } = await import('../apply/index.js');
  const previewOnly = Boolean(flags.dryRun || flags.diff);
  const interactive = decideInteractive(flags, deps);
  let shown = false;
  const confirm = async (preview: ApplyPreview): Promise<boolean> => {
    if (!flags.json) show(preview, log, flags);
    shown = true;
    if (previewOnly) return false;
    if (flags.yes) return true;
    if (!interactive) return false;
    const prompter = deps.prompter ?? (await import('../questions/inquirerPrompter.js')).createInquirerPrompter();
    return prompter.confirm({ id: 'apply', message: `Apply these ${preview.changes.length} file change${preview.changes.length === 1 ? '' : 's'}?`, default: false });
  };
  const run = (signal?: AbortSignal) => applyWiring({ cwd: path.resolve(flags.cwd ?? '.'), config: flags.config, ...(flags.action !== undefined ? { action: flags.action } : {}), confirm, ...(signal ? { signal } : {}) });
  const result = context.interrupts ? await context.interrupts.cancellable(run) : await run();
  if (!shown && !flags.json) show(result, log, flags);
  if (flags.json) process.stdout.write(`${JSON.stringify({ written: result.written, files: result.changes.map((c) => ({ path: c.path, diff: c.diff })), edits: result.edits, manual: result.manual, stale: result.stale, ...(result.sources ? { sources: { path: result.sources.path, moved: result.sources.moved, ...(result.sources.transactional ? { transactional: result.sources.transactional } : {}) } } : {}) }, null, 2)}\n`);
  if (result.stale.length > 0) {
    throw new FindingsError('Not applied: the code changed since the inspection that recorded the actions\u2019 locations. Run `idempotency-builder init` again (or fix actions[].source), then apply.', result.stale);
  }
  if (result.written) {
    log.success(`Applied ${result.changes.length} file change${result.changes.length === 1 ? '' : 's'}; the apply record is in .idempotency-builder/apply.json.`);
    // The document lists which edits were applied and which stay manual, from that record.
    log.info('Run `idempotency-builder generate` so the design document records these edits (which were applied, which stay manual).');
  }
  else if (result.changes.length === 0) log.success('Nothing to change: every action apply can wire is wired.');
  else if (!previewOnly && !flags.yes && !interactive) {
    // CONTRACT: without a terminal a required answer is a flag; the confirmation is one.
    throw new UserError('Nothing written: apply edits your code only when confirmed, and there is no terminal to ask.', 'Review the diff above (or run with --diff), then pass --yes to write it.');
  }
  else if (!previewOnly) log.info('Nothing written.');
  return result;
}

function show(preview: ApplyPreview, log: Logger, flags: ApplyFlags): void {
  // A refused run shows no diff: it would not be the one applied after the inspection is refreshed.
  if (!flags.quiet && preview.stale.length === 0 && (flags.diff || !flags.dryRun)) for (const change of preview.changes) process.stdout.write(change.diff);
  for (const edit of preview.edits) log.info(`${log.value(edit.file)}: ${edit.summary}`);
  if (preview.sources?.transactional) log.info(`${log.value(preview.sources.path)}: "mode": "transactional" for ${preview.sources.transactional.join(', ')} (writes moved onto the claim's transaction)`);
  if (preview.sources && preview.sources.moved > 0) log.info(`${log.value(preview.sources.path)}: ${preview.sources.moved} action source${preview.sources.moved === 1 ? '' : 's'} follow${preview.sources.moved === 1 ? 's' : ''} the line${preview.sources.moved === 1 ? '' : 's'} these edits move`);
  for (const step of preview.manual) log.warn(`manual: ${step.action}${step.file ? ` (${step.file}${step.line ? `:${step.line}` : ''})` : ''}: ${step.reason}`);
}
