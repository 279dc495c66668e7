import { Command, Option } from 'commander';
import path from 'node:path';
import { CancelledError, FindingsError } from '../errors.js';
import type { CliContext } from './commands.js';
import type { PlannedWrite, WriteAction } from '../emit/planWrites.js';
import type { GenerateOptions, GenerateResult } from '../generate.js';
import { createLogger, type Logger } from '../logger.js';

/** The pipeline's options as flags, plus what only concerns the terminal. */
type GenerateFlags = Partial<Omit<GenerateOptions, 'inspection' | 'now'>> & {
  diff?: boolean;
  json?: boolean;
  quiet?: boolean;
};

export function generateCommand(context: CliContext = {}): Command {
  return new Command('generate')
    .description('Render the design document (and scaffolding) from idempotency.config.json; never prompts.')
    .option('--cwd <dir>', 'project root', '.')
    .option('--config <file>', 'config file, relative to the project root', 'idempotency.config.json')
    .addOption(new Option('--format <format>', 'document format (overrides the config)').choices(['html', 'md']))
    .option('--out <path>', 'document path (overrides the config)')
    .addOption(new Option('--split <mode>', 'single file or linked folder').choices(['auto', 'always', 'never']))
    .option('--check', 'write nothing; exit 1 listing files that differ from what would be generated')
    .option('--dry-run', 'print the write plan without writing')
    .option('--diff', 'print a unified diff of what would change, without writing')
    .option('--force', 'overwrite scaffold files you have edited (and restore ones you deleted)')
    .option('--accept <path...>', 'record that your edited scaffold file already includes its current generated version')
    .option('--json', 'print the result as JSON')
    .option('--quiet', 'print only warnings and errors')
    .option('--date <yyyy-mm-dd>', 'date for the footer (default: SOURCE_DATE_EPOCH, then the date already in the document)')
    .addOption(new Option('--diagrams <renderer>', 'SVG renderer for HTML diagrams').choices(['beautiful-mermaid', 'mermaid-cli']))
    .action(async (flags: GenerateFlags) => {
      await runGenerate(flags, context);
    });
}

type Outcome = Pick<GenerateResult, 'plan' | 'document' | 'written' | 'warnings' | 'notes'> & { model?: GenerateResult['model'] };

export async function runGenerate(flags: GenerateFlags, context: CliContext = {}): Promise<Outcome> {
  const log = createLogger({ quiet: flags.quiet || flags.json });
  const quick = flags.check && !flags.accept?.length ? await checkWithoutRendering(flags) : undefined;
  const [{ generate }, { staleFiles, describeStale }] = await Promise.all([quick ? { generate: undefined } : import('../generate.js'), import('../emit/staleFiles.js')]);
  const options: GenerateOptions = {
    cwd: path.resolve(flags.cwd ?? '.'),
    config: flags.config,
    format: flags.format,
    out: flags.out,
    split: flags.split,
    check: flags.check,
    // --diff shows what would change; like --dry-run it never writes.
    dryRun: flags.dryRun || flags.diff,
    force: flags.force,
    accept: flags.accept,
    date: flags.date,
    diagrams: flags.diagrams,
  };
  const interrupts = context.interrupts;
  const result: Outcome = quick ?? (interrupts ? await interrupts.cancellable((signal) => generate!({ ...options, signal })) : await generate!(options));
  if (interrupts?.signal.aborted && result.written) {
    // The signal came while files were being renamed into place: that step always completes, so say so.
    throw new CancelledError('Cancelled after the write had started; it was completed, so every file and the manifest are consistent.');
  }
  const diffs = flags.diff ? await diffsOf(result.plan) : new Map<PlannedWrite, string>();
  const stale = staleFiles(result.plan);
  if (flags.json) {
    const { MANIFEST_PATH } = await import('../emit/manifest.js');
    const files = result.plan.map((p) => ({ path: p.path, class: p.class, action: p.action, ...(p.reason ? { reason: p.reason } : {}), ...(p.behind ? { behind: true } : {}), ...(diffs.has(p) ? { diff: diffs.get(p) } : {}) }));
    const body = { document: result.document, written: result.written, manifest: MANIFEST_PATH, warnings: result.warnings, notes: result.notes, ...(flags.check ? { stale: stale.map((p) => p.path) } : {}), files };
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  } else {
    report(result, log, flags);
    for (const text of diffs.values()) process.stdout.write(text);
  }
  if (flags.check) {
    if (stale.length > 0) {
      const behind = stale.filter((item) => item.behind).length;
      const fix = behind === stale.length ? '' : ' run `idempotency-builder generate` and commit the result';
      const merge = behind === 0 ? '' : `${fix ? ';' : ''} reconcile the edited file${behind === 1 ? '' : 's'} as shown below`;
      throw new FindingsError(`${stale.length} generated file${stale.length === 1 ? ' is' : 's are'} out of date:${fix}${merge}.`, stale.map(describeStale));
    }
    log.success('Generated files are up to date.');
  }
  return result;
}

/**
 * `--check` in CI with nothing changed: the manifest's inputs key answers it before the config schema, the model or
 * any renderer is loaded (emit/upToDate.ts). The key covers the config's exact text, so a config that validated
 * when the key was recorded is valid now. Anything unexpected (no config, bad JSON, a bad --out) falls through to
 * the full run, which reports it properly.
 */
async function checkWithoutRendering(flags: GenerateFlags): Promise<Outcome | undefined> {
  try {
    const [{ readFile }, { CONFIG_FILE }, { resolveOutput }, { normalizeRelative }, { upToDateByInputs }] = await Promise.all([
      import('node:fs/promises'),
      import('../config/choices.js'),
      import('../emit/documentPath.js'),
      import('../emit/safePath.js'),
      import('../emit/upToDate.js'),
    ]);
    const root = path.resolve(flags.cwd ?? '.');
    const text = (await readFile(path.resolve(root, flags.config ?? CONFIG_FILE), 'utf8')).replace(/\r\n?/g, '\n');
    const raw = JSON.parse(text.replace(/^\uFEFF/, '')) as { format?: unknown; output?: unknown };
    const format = flags.format ?? (raw.format === 'md' ? 'md' : 'html');
    const output = normalizeRelative(resolveOutput({ output: typeof raw.output === 'string' ? raw.output : undefined }, format, flags.out));
    const date = flags.date === undefined ? sourceDate() : dayOf(flags.date);
    if (date === null) return undefined;
    const found = await upToDateByInputs(root, { configText: text, format, output, ...(flags.split ? { split: flags.split } : {}), ...(flags.diagrams ? { diagrams: flags.diagrams } : {}), ...(date ? { date } : {}) });
    return found && { plan: found.plan, document: found.document, written: false, warnings: [], notes: [] };
  } catch {
    return undefined;
  }
}

/** SOURCE_DATE_EPOCH as YYYY-MM-DD, as generate reads it; undefined when unset, null when malformed (the full run reports it). */
function sourceDate(): string | undefined | null {
  const epoch = process.env['SOURCE_DATE_EPOCH'];
  if (epoch === undefined || epoch === '') return undefined;
  return /^\d+$/.test(epoch) ? new Date(Number(epoch) * 1000).toISOString().slice(0, 10) : null;
}

/** --date as generate reads it, or null when malformed. */
function dayOf(value: string): string | null {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00Z`) : undefined;
  return date && !Number.isNaN(date.getTime()) ? date.toISOString().slice(0, 10) : null;
}

async function diffsOf(plan: readonly PlannedWrite[]): Promise<Map<PlannedWrite, string>> {
  const { unifiedDiff } = await import('../emit/unifiedDiff.js');
  const diffs = new Map<PlannedWrite, string>();
  for (const item of plan) {
    if (item.action === 'create' || item.action === 'update') diffs.set(item, unifiedDiff(item.current, item.contents, { path: item.path }));
    else if (item.action === 'remove') diffs.set(item, unifiedDiff(item.current, undefined, { path: item.path }));
  }
  return diffs;
}

const DONE: Record<WriteAction, string> = { create: 'created', update: 'updated', unchanged: 'unchanged', 'user-modified': 'skipped', remove: 'removed', orphan: 'left' };
const PLANNED: Record<WriteAction, string> = {
  create: 'would create',
  update: 'would update',
  unchanged: 'unchanged',
  'user-modified': 'would skip',
  remove: 'would remove',
  orphan: 'would leave',
};

function report(result: Outcome, log: Logger, flags: GenerateFlags): void {
  for (const warning of result.warnings) log.warn(warning);
  for (const note of result.notes) log.info(note);
  const verbs = result.written ? DONE : PLANNED;
  const width = result.written ? 9 : 12;
  // A real run lists only what changed (CI logs stay short); a dry run, diff or check shows the whole plan.
  const listAll = !result.written && !flags.diff;
  for (const item of result.plan) {
    if (item.action === 'unchanged' && !listAll) continue;
    const line = `${verbs[item.action].padEnd(width)} ${log.value(item.path)}${item.reason ? log.dim(` (${item.reason})`) : ''}`;
    if (item.action === 'user-modified' || item.action === 'orphan') log.warn(line);
    else if (!flags.check) log.info(item.action === 'unchanged' ? log.dim(line) : line);
  }
  const counts = new Map<WriteAction, number>();
  for (const item of result.plan) counts.set(item.action, (counts.get(item.action) ?? 0) + 1);
  const summary = [...counts].map(([action, count]) => `${count} ${verbs[action]}`).join(', ');
  if (!flags.check) log.info(log.dim(`${result.written ? '' : 'Plan: '}${summary}.`));
  if (result.written && result.model) {
    const m = result.model;
    log.success(
      `Design for ${m.actions.length} action${m.actions.length === 1 ? '' : 's'} written to ${log.value(result.document)} (leases ${m.actions.map((a) => `${a.name} ${a.lockTimeoutMs / 1000}s`).join(', ')}; retention ${m.retention.label}; mismatch ${m.stack.plain ? 'MismatchError' : m.responses.mismatchStatus}).`,
    );
  }
}
