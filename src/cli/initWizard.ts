import { stackSummary } from '../model/stackSummary.js';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { CONFIG_FILE, validateConfig } from '../config/load.js';
import { writeInside } from '../emit/writeAtomic.js';
import { resolveInside } from '../emit/safePath.js';
import { UserError } from '../errors.js';
import type { PlannedWrite } from '../emit/planWrites.js';
import type { GenerateResult } from '../generate.js';
import type { Config } from '../config/schema.js';
import type { Inspection } from '../inspect/types.js';
import { createLogger, type Logger } from '../logger.js';
import { actionsFromInspection } from '../questions/actionsFromInspection.js';
import { buildConfig } from '../questions/buildConfig.js';
import { reviewedCandidates } from '../questions/reviewedCandidates.js';
import { looksLikeCode } from '../questions/looksLikeCode.js';
import { findMissingBeforeInspection, resolveAnswers, type Resolution } from '../questions/resolveAnswers.js';
import { summarizeInspection } from '../questions/summarizeInspection.js';
import type { QuestionFlags } from '../questions/types.js';
import type { InitDeps, InitFlags, InitResult } from './init.js';
import { fewNames } from '../model/labels.js';

/** The wizard: decide interactivity once, inspect, resolve every question, write the config, generate, summarise. */
export async function runInitWizard(flags: InitFlags, deps: InitDeps = {}): Promise<InitResult> {
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
  await keyPublicNestRoutesGlobally(root, config, validateConfig(config, configFile));
  resolveInside(root, resolution.answers.output);
  if (resolution.answers.scaffold !== false) resolveInside(root, resolution.answers.scaffold.dir);

  await writeInside(root, configFile, `${JSON.stringify(config, null, 2)}\n`);
  log.success(`Wrote ${log.value(path.relative(root, configPath) || configFile)}`);
  const { generate } = await import('../generate.js');
  // Every endpoint, consumer and job inspection found that the actions leave out goes into the design, with why.
  const reviewed = reviewedCandidates(actionsFromInspection(inspection), resolution.answers.actions);
  const options = { cwd: root, config: configFile, inspection, reviewed, date: flags.date };
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
  log.info(
    m.stack.plain
      ? `  Same key, different request: ${log.value('MismatchError')}; still in flight: InFlightError with retryAfterSeconds`
      : `  Same key, different request: ${log.value(m.responses.mismatchStatus)}; still in flight: 409 + Retry-After`,
  );
  log.info(`  Providers: ${m.providers.length > 0 ? m.providers.map((p) => (p.windowMs ? `${p.label}: ${p.windowLabel}` : `${p.label} (${p.windowLabel})`)).join('. ') : 'none'}`);
  log.info(`  Stack: ${stackSummary(m.stack)}; concurrency ${m.concurrency.label.toLowerCase()}`);
  if (resolution.storeNote) log.info(`  Store: ${resolution.storeNote}`);
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

/**
 * A NestJS route nothing authenticates (a sign-up, a guest checkout) has no caller to scope its keys to: keyed per
 * user, every request to it would be answered 401. Such actions whose scope no answer set are keyed globally, with an
 * assumption naming them; the rules are apply's (nestAuthentication.ts), read from the controllers themselves.
 */
async function keyPublicNestRoutesGlobally(root: string, raw: Record<string, unknown>, config: Config): Promise<void> {
  if (config.stack.framework !== 'nestjs') return;
  const [{ publicNestActions }, { buildDesign }] = await Promise.all([import('../apply/planApply.js'), import('../model/index.js')]);
  const unscoped = new Set(config.actions.filter((a) => a.trigger === 'http' && a.scope === undefined).map((a) => a.name));
  if (unscoped.size === 0) return;
  const found = (await publicNestActions(root, config, buildDesign(config, undefined, { now: new Date() }))).filter((p) => unscoped.has(p.action));
  if (found.length === 0) return;
  const actions = raw['actions'] as Array<Record<string, unknown>>;
  for (const action of actions) if (found.some((p) => p.action === action['name'])) action['scope'] = 'global';
  const names = found.map((p) => (p.optOut ? `${p.action} (opts out of the global guard with ${p.optOut})` : p.action));
  const assumptions = Array.isArray(raw['assumptions']) ? (raw['assumptions'] as string[]) : [];
  raw['assumptions'] = [
    ...assumptions,
    `Nothing authenticates the route${names.length === 1 ? '' : 's'} of ${fewNames(names, 2)} (no guard on the method or its controller, no global guard, no auth middleware bound to it), so there is no caller to scope its keys to: ${found.length === 1 ? 'its keys are' : 'their keys are'} global ("scope": "global"), where a per-user scope would answer every request 401. Guard the route and set "scope": "user" if it serves signed-in callers.`,
  ];
}
