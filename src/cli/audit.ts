import { Command, Option } from 'commander';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { FindingsError, UserError } from '../errors.js';
import type { CodeFinding, Severity } from '../findings/types.js';

export interface AuditFlags {
  format?: 'text' | 'json' | 'sarif';
  severity?: Severity;
  baseline?: string;
  config?: string;
}

/** Where `audit` looks for accepted findings when `--baseline` is not given. */
export const DEFAULT_BASELINE = '.idempotency-builder/audit-baseline.json';

export function auditCommand(): Command {
  return new Command('audit')
    .description('Run the idempotency findings rules on a codebase and report them; writes nothing. Exit 1 when a finding at or above --severity is neither suppressed nor in the baseline.')
    .argument('[dir]', 'project directory to audit', '.')
    .addOption(new Option('--format <format>', 'report format').choices(['text', 'json', 'sarif']).default('text'))
    .addOption(new Option('--severity <level>', 'lowest severity that fails the run (exit 1)').choices(['error', 'warning', 'note']).default('warning'))
    .option('--baseline <file>', `accepted findings: an earlier \`audit --format json\` report (default: ${DEFAULT_BASELINE} when present)`)
    .option('--config <file>', 'idempotency.config.json to check configured actions against (default: the one in DIR)')
    // Subcommands do not inherit the program's exitOverride: without it a bad --format would exit 1 (findings), not 2.
    .exitOverride()
    .action(async (dir: string, flags: AuditFlags) => {
      await runAudit(dir, flags);
    });
}

export async function runAudit(dir: string, flags: AuditFlags = {}): Promise<CodeFinding[]> {
  const root = path.resolve(dir);
  const info = await stat(root).catch(() => undefined);
  if (!info?.isDirectory()) throw new UserError(`${dir} is not a directory.`, 'Pass the project directory, e.g. `idempotency-builder audit ./my-service`.');
  const [{ auditProject }, { applyBaseline, readBaseline }, { blockingFindings }] = await Promise.all([
    import('../findings/auditProject.js'),
    import('../findings/baseline.js'),
    import('../findings/severity.js'),
  ]);
  const config = flags.config ? await loadConfigFile(root, flags.config) : undefined;
  const result = await auditProject(root, config ? { config } : {});
  const baseline = await loadBaseline(root, flags.baseline, readBaseline);
  const findings = baseline ? applyBaseline(result.findings, baseline) : result.findings;
  process.stdout.write(await render(findings, flags.format ?? 'text', result.filesScanned));
  const blocking = blockingFindings(findings, flags.severity ?? 'warning');
  if (blocking.length) {
    throw new FindingsError(`${blocking.length} finding${blocking.length === 1 ? '' : 's'} at or above ${flags.severity ?? 'warning'}; fix them, suppress one with \`// idempotency-builder-ignore <rule-id>: reason\`, or accept the current set with \`audit --format json > ${DEFAULT_BASELINE}\`.`);
  }
  return findings;
}

async function render(findings: CodeFinding[], format: NonNullable<AuditFlags['format']>, filesScanned: number): Promise<string> {
  if (format === 'json') return (await import('../findings/report/formatJson.js')).formatJson(findings, filesScanned);
  if (format === 'sarif') {
    const { formatSarif } = await import('../findings/report/formatSarif.js');
    return formatSarif(findings, await packageVersion());
  }
  const { formatText } = await import('../findings/report/formatText.js');
  const color = !process.env['NO_COLOR'] && Boolean(process.stdout.isTTY);
  return formatText(findings, { color, filesScanned });
}

async function loadConfigFile(root: string, file: string) {
  const { parseConfig } = await import('../config/load.js');
  const text = await readFile(path.resolve(root, file), 'utf8').catch(() => {
    throw new UserError(`Cannot read ${file}.`, 'Pass the path of idempotency.config.json, or leave --config out.');
  });
  return parseConfig(text, file);
}

async function loadBaseline(root: string, flag: string | undefined, read: (text: string, label: string) => Map<string, number>): Promise<Map<string, number> | undefined> {
  const file = path.resolve(root, flag ?? DEFAULT_BASELINE);
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) {
    if (flag) throw new UserError(`Baseline ${flag} not found.`, `Create it with \`idempotency-builder audit --format json > ${flag}\`.`);
    return undefined;
  }
  try {
    return read(text, flag ?? DEFAULT_BASELINE);
  } catch (error) {
    throw new UserError((error as Error).message, `Regenerate it with \`idempotency-builder audit --format json > ${flag ?? DEFAULT_BASELINE}\`.`);
  }
}

async function packageVersion(): Promise<string> {
  const text = await readFile(new URL('../../package.json', import.meta.url), 'utf8').catch(() => '{}');
  return (JSON.parse(text) as { version?: string }).version ?? '0.0.0';
}
