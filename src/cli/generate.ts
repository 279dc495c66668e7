import { Command, Option } from 'commander';
import path from 'node:path';
import { FindingsError } from '../errors.js';
import type { GenerateOptions, GenerateResult } from '../generate.js';
import { createLogger, type Logger } from '../logger.js';

interface GenerateFlags {
  cwd?: string;
  config?: string;
  format?: 'html' | 'md';
  out?: string;
  split?: 'auto' | 'always' | 'never';
  check?: boolean;
  dryRun?: boolean;
  force?: boolean;
  json?: boolean;
  quiet?: boolean;
  date?: string;
  diagrams?: 'beautiful-mermaid' | 'mermaid-cli';
}

export function generateCommand(): Command {
  return new Command('generate')
    .description('Render the design document (and scaffolding) from idempotency.config.json; never prompts.')
    .option('--cwd <dir>', 'project root', '.')
    .option('--config <file>', 'config file, relative to the project root', 'idempotency.config.json')
    .addOption(new Option('--format <format>', 'document format (overrides the config)').choices(['html', 'md']))
    .option('--out <path>', 'document path (overrides the config)')
    .addOption(new Option('--split <mode>', 'single file or linked folder').choices(['auto', 'always', 'never']))
    .option('--check', 'write nothing; exit 1 listing files that differ from what would be generated')
    .option('--dry-run', 'print the write plan without writing')
    .option('--force', 'overwrite scaffold files you have edited')
    .option('--json', 'print the result as JSON')
    .option('--quiet', 'print only warnings and errors')
    .option('--date <yyyy-mm-dd>', 'date for the footer (default: SOURCE_DATE_EPOCH, then the date already in the document)')
    .addOption(new Option('--diagrams <renderer>', 'SVG renderer for HTML diagrams').choices(['beautiful-mermaid', 'mermaid-cli']))
    .action(async (flags: GenerateFlags) => {
      await runGenerate(flags);
    });
}

export async function runGenerate(flags: GenerateFlags): Promise<GenerateResult> {
  const log = createLogger({ quiet: flags.quiet || flags.json });
  const { generate } = await import('../generate.js');
  const options: GenerateOptions = {
    cwd: path.resolve(flags.cwd ?? '.'),
    config: flags.config,
    format: flags.format,
    out: flags.out,
    split: flags.split,
    check: flags.check,
    dryRun: flags.dryRun,
    force: flags.force,
    date: flags.date,
    diagrams: flags.diagrams,
  };
  const result = await generate(options);
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify({ document: result.document, written: result.written, files: result.plan.map((p) => ({ path: p.path, class: p.class, action: p.action })) }, null, 2)}\n`,
    );
  } else {
    report(result, log, flags);
  }
  if (flags.check) {
    const stale = result.plan.filter((p) => p.action === 'create' || p.action === 'update' || (p.class === 'managed' && p.action === 'user-modified'));
    if (stale.length > 0) {
      throw new FindingsError(
        `${stale.length} generated file${stale.length === 1 ? ' is' : 's are'} out of date; run \`idempotency-builder generate\` and commit the result.`,
        stale.map((p) => `${p.path} (${p.action === 'create' ? 'missing' : 'differs'})`),
      );
    }
    log.success('Generated files are up to date.');
  }
  return result;
}

const VERBS = { create: 'created', update: 'updated', unchanged: 'unchanged', 'user-modified': 'skipped (edited by you; --force overwrites)' } as const;
const PLAN_VERBS = { create: 'would create', update: 'would update', unchanged: 'unchanged', 'user-modified': 'would skip (edited by you)' } as const;

function report(result: GenerateResult, log: Logger, flags: GenerateFlags): void {
  if (flags.check) return;
  const verbs = result.written ? VERBS : PLAN_VERBS;
  for (const item of result.plan) {
    const line = `${verbs[item.action].padEnd(result.written ? 9 : 12)} ${log.value(item.path)}`;
    if (item.action === 'user-modified') log.warn(line);
    else log.info(item.action === 'unchanged' ? log.dim(line) : line);
  }
  if (result.written) {
    const m = result.model;
    log.success(
      `Design for ${m.actions.length} action${m.actions.length === 1 ? '' : 's'} written to ${log.value(result.document)} (leases ${m.actions.map((a) => `${a.name} ${a.lockTimeoutMs / 1000}s`).join(', ')}; retention ${m.retention.label}; mismatch ${m.responses.mismatchStatus}).`,
    );
  }
}
