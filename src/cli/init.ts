import { Command, Option } from 'commander';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { CONFIG_FILE, validateConfig } from '../config/load.js';
import { BROKERS, CONCURRENCY, DATABASES, FORMATS, FRAMEWORKS, LANGUAGES, TEST_FRAMEWORKS } from '../config/schema.js';
import { writeInside } from '../emit/writeAtomic.js';
import { resolveInside } from '../emit/safePath.js';
import { UserError } from '../errors.js';
import type { PlannedWrite } from '../emit/planWrites.js';
import type { GenerateResult } from '../generate.js';
import type { Inspection } from '../inspect/types.js';
import { createLogger, type Logger } from '../logger.js';
import { buildConfig } from '../questions/buildConfig.js';
import { looksLikeCode } from '../questions/looksLikeCode.js';
import type { Prompter } from '../questions/prompter.js';
import type { CliContext } from './commands.js';
import type { Interrupts } from './interrupt.js';
import { findMissingBeforeInspection, resolveAnswers, type Resolution } from '../questions/resolveAnswers.js';
import { summarizeInspection } from '../questions/summarizeInspection.js';
import type { QuestionFlags } from '../questions/types.js';

export interface InitFlags extends QuestionFlags {
  cwd?: string;
  config?: string;
  yes?: boolean;
  interactive?: boolean;
  date?: string;
}

export interface InitDeps {
  /** Tests inject a scripted prompter; otherwise the inquirer one is loaded when needed. */
  prompter?: Prompter;
  /** Overrides the TTY/CI decision (tests). */
  interactive?: boolean;
  log?: Logger;
  /** Ctrl-C/SIGTERM while generating: stop with nothing half-written (main.ts provides it). */
  interrupts?: Interrupts;
}

export interface InitResult {
  configPath: string;
  resolution: Resolution;
  generated: GenerateResult;
}

export function initCommand(context: CliContext = {}): Command {
  const list = (values: readonly string[]) => values.join('|');
  return new Command('init')
    .description('Inspect the codebase, ask only what it cannot answer, write idempotency.config.json and generate the design.')
    .option('--cwd <dir>', 'project root', '.')
    .option('--config <file>', 'config file to write, relative to the project root', CONFIG_FILE)
    .option('-y, --yes', 'accept the inferred answers and defaults without asking')
    .option('--interactive', 'ask even when CI is set or the terminal check fails')
    .addOption(new Option('--format <format>', `document format (${list(FORMATS)})`))
    .option('--out <path>', 'document path, e.g. docs/idempotency-design.html')
    .option('--actions <json|file>', 'Q1 actions to protect: JSON array (as in the config) or a path to a JSON file')
    .addOption(new Option('--language <language>', `Q2 ${list(LANGUAGES)}`))
    .addOption(new Option('--framework <framework>', `Q2 ${list(FRAMEWORKS)}`))
    .addOption(new Option('--database <database>', `Q2 ${list(DATABASES)}`))
    .addOption(new Option('--broker <broker>', `Q2 ${list(BROKERS)}`))
    .addOption(new Option('--test-framework <name>', `Q2 ${list(TEST_FRAMEWORKS)}`))
    .option('--retry-sources <list>', 'Q3 comma-separated, e.g. client-retry,double-click,queue-redelivery')
    .option('--payments <list>', 'Q4 comma-separated providers (stripe,adyen,paypal,bank-transfer) or none')
    .addOption(new Option('--concurrency <level>', `Q5 ${list(CONCURRENCY)}`))
    .option('--retention <duration>', 'Q6 key retention, e.g. 72h')
    .option('--detection-latency <duration>', 'Q7 how fast a duplicate is rejected, e.g. 50ms')
    .option('--scaffold-dir <dir>', 'folder for the runnable scaffolding, e.g. src/idempotency')
    .option('--no-scaffold', 'write the document only')
    .option('--date <yyyy-mm-dd>', 'date for the document footer (reproducible output)')
    .action(async (flags: InitFlags) => {
      await runInit(flags, { interrupts: context.interrupts });
    });
}

/** The wizard: decide interactivity once, inspect, resolve every question, write the config, generate, summarise. */
export async function runInit(flags: InitFlags, deps: InitDeps = {}): Promise<InitResult> {
  const log = deps.log ?? createLogger();
  const root = path.resolve(flags.cwd ?? '.');
  if (!(await stat(root).catch(() => undefined))?.isDirectory()) throw new UserError(`--cwd ${flags.cwd ?? '.'} is not a folder.`);
  const configFile = flags.config ?? CONFIG_FILE;
  const configPath = path.resolve(root, configFile);
  const existing = await readExistingConfig(configPath, configFile);
  warnAboutInvalidParts(existing, configFile, log);
  const { interactive, reason } = decideInteractive(flags, deps);
  const questionFlags: QuestionFlags = { ...flags, scaffold: flags.scaffold };
  const mayInspect = await looksLikeCode(root);

  // Fail before the slow part: a CI run without the answers only a person can give should not wait for ts-morph.
  if (!interactive || flags.yes) {
    await findMissingBeforeInspection({ flags: questionFlags, config: existing, cwd: root, interactive, yes: Boolean(flags.yes), reason, inspection: emptyInspection(root), mayInspect });
  }

  const inspection = mayInspect ? await inspect(root, log) : emptyInspection(root);
  const prompter = interactive && !flags.yes ? (deps.prompter ?? (await import('../questions/inquirerPrompter.js')).createInquirerPrompter()) : undefined;
  const say = (text: string) => (prompter ? prompter.note(text) : log.info(text));
  if (Object.keys(existing).length > 0) {
    say(`Starting from ${configFile}: its answers are the defaults.`);
  }
  for (const line of summarizeInspection(inspection)) say(line);

  const resolution = await resolveAnswers({ flags: questionFlags, config: existing, inspection, cwd: root, interactive, yes: Boolean(flags.yes), prompter, reason });
  const config = buildConfig(existing, resolution, interactive && !flags.yes);
  validateConfig(config, configFile);
  resolveInside(root, resolution.answers.output);
  if (resolution.answers.scaffold !== false) resolveInside(root, resolution.answers.scaffold.dir);

  await writeInside(root, configFile, `${JSON.stringify(config, null, 2)}\n`);
  log.success(`Wrote ${log.value(path.relative(root, configPath) || configFile)}`);
  const { generate } = await import('../generate.js');
  const options = { cwd: root, config: configFile, inspection, date: flags.date };
  const generated = deps.interrupts ? await deps.interrupts.cancellable((signal) => generate({ ...options, signal })) : await generate(options);
  printSummary(generated, resolution, log);
  return { configPath, resolution, generated };
}

function decideInteractive(flags: InitFlags, deps: InitDeps): { interactive: boolean; reason: string } {
  const ci = process.env['CI'];
  const ciSet = ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
  if (deps.interactive !== undefined) return { interactive: deps.interactive, reason: 'prompts disabled' };
  if (flags.interactive) return { interactive: true, reason: '' };
  if (ciSet) return { interactive: false, reason: 'CI is set' };
  const tty = Boolean(process.stdin.isTTY) && Boolean(process.stdout.isTTY);
  return { interactive: tty, reason: 'stdin or stdout is not a terminal' };
}

async function readExistingConfig(file: string, label: string): Promise<Record<string, unknown>> {
  if (!existsSync(file)) return {};
  const text = await readFile(file, 'utf8');
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new UserError(`${label} is not valid JSON: ${(error as Error).message}.`, 'Fix the syntax or delete the file to start over.');
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new UserError(`${label} must contain a JSON object.`, 'Delete it to start over.');
  return raw as Record<string, unknown>;
}

/** Each question keeps only the valid part of the config it owns, so a broken config is repaired rather than fatal. */
function warnAboutInvalidParts(existing: Record<string, unknown>, label: string, log: Logger): void {
  if (Object.keys(existing).length === 0) return;
  try {
    validateConfig(existing, label);
  } catch (error) {
    log.warn(`${(error as Error).message}\n  init asks for those again (or, without a terminal, needs their flags).`);
  }
}

async function inspect(root: string, log: Logger): Promise<Inspection> {
  const { inspectProject } = await import('../inspect/index.js');
  try {
    return await inspectProject(root);
  } catch (error) {
    // The questions still work without it; a broken inspection must not block writing a design.
    log.warn(`Inspection failed (${(error as Error).message}); continuing without it.`);
    return emptyInspection(root);
  }
}

function emptyInspection(root: string): Inspection {
  return {
    root,
    stack: { language: 'unknown', frameworks: [], databases: [], orms: [], brokers: [], testFramework: 'unknown', packageManager: 'unknown', payments: [] },
    findings: [],
    warnings: [],
  };
}

const VERBS: Record<PlannedWrite['action'], string> = {
  create: 'created',
  update: 'updated',
  unchanged: 'unchanged',
  'user-modified': 'skipped (edited by you; generate --force overwrites)',
  remove: 'removed',
  orphan: 'left in place (no longer generated, edited by you)',
};

/** The spec's chat summary: the decisions a reviewer checks first, then every path written. */
function printSummary(result: GenerateResult, resolution: Resolution, log: Logger): void {
  const m = result.model;
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10}s`;
  log.info('');
  log.info('Key decisions');
  log.info(`  Leases (lock timeouts): ${m.actions.map((a) => `${a.name} ${log.value(seconds(a.lockTimeoutMs))}`).join(', ')}`);
  log.info(`  Key retention: ${log.value(m.retention.label)}${m.retention.raised ? ` (raised from ${resolution.answers.retention})` : ''}`);
  log.info(`  Same key, different request: ${log.value(m.responses.mismatchStatus)}; still in flight: 409 + Retry-After`);
  log.info(`  Providers: ${m.providers.length > 0 ? m.providers.map((p) => `${p.label} (${p.windowMs ? `provider keeps keys ${p.windowLabel}` : p.windowLabel})`).join('; ') : 'none'}`);
  log.info(`  Stack: ${m.stack.agnostic ? 'technology-agnostic, PostgreSQL reference' : `${m.stack.frameworkLabel} on ${m.stack.databaseLabel}`}; concurrency ${m.concurrency.label.toLowerCase()}`);
  if (m.existingProtection.length > 0) log.info(`  Existing protection credited: ${m.existingProtection.length} place(s)`);
  if (m.assumptions.length > 0) log.info(`  Assumptions: ${m.assumptions.length}, listed in the document`);
  log.info('');
  log.info('Files');
  for (const item of result.plan) {
    const line = `  ${VERBS[item.action]} ${log.value(item.path)}`;
    if (item.action === 'user-modified') log.warn(line.trim());
    else log.info(item.action === 'unchanged' ? log.dim(line) : line);
  }
  // What the user must know about the scaffolding: the reference target stood in, dependencies to add per package.
  for (const warning of result.warnings) log.warn(warning);
  for (const note of result.notes) log.info(note);
  log.success(`Design document: ${log.value(result.document)}. Edit idempotency.config.json and run \`idempotency-builder generate\` to update it.`);
}
