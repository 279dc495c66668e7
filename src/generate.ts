import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { CancelledError, UserError } from './errors.js';
import { formatFiles } from './emit/format.js';
import { lintScaffoldFiles } from './emit/lintFiles.js';
import { applyPlan } from './emit/applyPlan.js';
import { CACHE_DIR, deferCacheWrites } from './emit/diskCache.js';
import { resolveOutput } from './emit/documentPath.js';
import { inputsKey } from './emit/inputsKey.js';
import { normalizeText, readManifest } from './emit/manifest.js';
import { upToDateByInputs } from './emit/upToDate.js';
import { acquireProjectLock } from './emit/projectLock.js';
import { actionBrokers } from './model/actionBrokers.js';
import { actionForms } from './model/actionForms.js';
import { readSnapshot, snapshotFile, snapshotOf, type ProjectSnapshot } from './emit/protectionSnapshot.js';
import { planWrites, type PlannedWrite } from './emit/planWrites.js';
import { assertNoSymlinks, normalizeRelative, readInside, resolveInside } from './emit/safePath.js';
import type { CodeFinding } from './findings/types.js';
import type { Inspection } from './inspect/types.js';
import { buildDesign, type InspectionInput } from './model/index.js';
import { checkConstraints } from './model/constraints.js';
import { httplessKinds, noHttpRoute } from './model/httplessActions.js';
import { scaffoldFacts } from './model/scaffoldFacts.js';
import type { DesignModel, ReviewedCandidate } from './model/types.js';
import type { CodeSamples } from './render/code/index.js';
import type { RenderedFile } from './render/renderDocument.js';
import type { CodeExcerpt, ExcerptId } from './scaffold/types.js';
import { splitFolder } from './render/split/splitFolder.js';
import { claimPrestartedWorker } from './diagrams/layoutWorkerClient.js';

export interface GenerateOptions {
  cwd: string;
  config?: string;
  format?: 'html' | 'md';
  out?: string;
  split?: 'auto' | 'always' | 'never';
  /** Write nothing; report what differs. */
  check?: boolean;
  dryRun?: boolean;
  force?: boolean;
  /** Edited scaffold files whose current generated version the user merged by hand (recorded in the manifest). */
  accept?: string[];
  /** YYYY-MM-DD for the footer; otherwise SOURCE_DATE_EPOCH, then the date already on disk, then today. */
  date?: string;
  diagrams?: 'beautiful-mermaid' | 'mermaid-cli';
  inspection?: InspectionInput;
  /**
   * Findings on the code (from `auditProject`). When absent and an inspection is given (init), the rules run on `cwd`;
   * either way they are recorded in the snapshot so a later `generate` renders the same document.
   */
  findings?: readonly CodeFinding[];
  /** What inspection found that the chosen actions leave unprotected (init), recorded in the snapshot with why. */
  reviewed?: readonly ReviewedCandidate[];
  /** Injected clock for tests. */
  now?: () => Date;
  /** Cancels the run (Ctrl-C): it stops at the next safe point with nothing written and throws CancelledError. */
  signal?: AbortSignal;
}

export interface GenerateResult {
  plan: PlannedWrite[];
  model: DesignModel;
  document: string;
  written: boolean;
  /** Things the user should know that are not errors, e.g. no scaffold target for the stack yet. */
  warnings: string[];
  /** Next steps, printed as information: dependencies to add per package, where the tool migration went. */
  notes: string[];
}

/** Said when the config asks for scaffolding that no target can produce for this stack yet. */
export function scaffoldUnavailable(model: DesignModel, dir: string, available: readonly string[]): string {
  const s = model.stack;
  return `No runnable scaffolding for ${s.language === 'javascript' ? 'JavaScript' : 'TypeScript'} + ${s.frameworkLabel} + ${s.databaseLabel} yet (available: ${available.join('; ')}); nothing was written to ${dir}. The document shows the code for your stack.`;
}

export { defaultOutput, resolveOutput } from './emit/documentPath.js';

/**
 * The plain wrapper on PostgreSQL is the whole integration for a project whose actions are all reached without a route
 * of their own (GraphQL, tRPC, Server Actions, consumers, crons) on PostgreSQL: nothing to adapt, so no warning.
 */
function plainFits(model: DesignModel): boolean {
  return model.stack.framework === 'unknown' && model.stack.database === 'postgres' && noHttpRoute(model.actions);
}

/** Said (terminal and document) when the stack has no target and the reference target was generated instead. */
export function referenceNote(model: DesignModel, dir: string, label: string, written = true): string {
  const s = model.stack;
  // Say which part is unknown: a worker whose database alone was not found is not "an unknown stack".
  const unknown = s.unknownParts ?? [];
  const known = [
    ...(unknown.includes('language') ? [] : [s.language === 'javascript' ? 'JavaScript' : 'TypeScript']),
    ...(unknown.includes('framework') ? [] : [s.frameworkLabel]),
    ...(unknown.includes('database') ? [] : [s.databaseLabel]),
  ];
  const missing = `an unknown ${unknown.join(unknown.length > 2 ? ', ' : ' and ').replace(/, (?=[^,]*$)/, ' and ')}`;
  const stack = unknown.length === 0 ? known.join(' + ') : known.length === 0 ? `a project with ${missing}` : `${known.join(' + ')} with ${missing}`;
  const holds = written ? 'holds' : 'would hold (scaffolding is off)';
  if (s.framework === 'unknown' && noHttpRoute(model.actions)) {
    // An unknown framework whose actions are all reached without a route of their own: the plain wrapper, no HTTP server.
    if (plainFits(model)) {
      return `No action is a plain HTTP route (they are ${httplessKinds(model.actions)}), so no web framework is needed: ${dir} ${holds} the plain idempotent(fn) wrapper (${label}) that they call, on the project's PostgreSQL.`;
    }
    const store = s.database === 'unknown' ? '' : `; it runs on PostgreSQL, the reference store, to adapt to ${s.databaseLabel}`;
    return `No scaffolding target for ${stack} yet. No action is a plain HTTP route (they are ${httplessKinds(model.actions)}), so ${dir} ${holds} the plain idempotent(fn) wrapper (${label}) that your resolvers, procedures and handlers call, with no HTTP framework${store}. The design in this document is the one to follow.`;
  }
  return `No scaffolding target for ${stack} yet: ${dir} ${holds} the reference target instead (${label}), to adapt to your framework and store. The design in this document is the one to follow; the generated code shows it running on the reference stack.`;
}

/** The scaffold's excerpts that name their file (all of them do), as the document's code samples. */
function documentSamples(excerpts: Partial<Record<ExcerptId, CodeExcerpt>>): CodeSamples {
  const samples: CodeSamples = {};
  for (const [id, excerpt] of Object.entries(excerpts) as Array<[ExcerptId, CodeExcerpt]>) {
    if (excerpt.path !== undefined) samples[id] = { language: excerpt.language, code: excerpt.code, path: excerpt.path };
  }
  return samples;
}

/** Where the scaffolding goes when the config does not say (and where the document places it when it is off). */
const DEFAULT_SCAFFOLD_DIR = 'src/idempotency';

function parseDateOption(value: string, source: string): Date {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00Z`) : undefined;
  if (!date || Number.isNaN(date.getTime())) throw new UserError(`${source} must be a date like 2026-01-31 (found "${value}").`);
  return date;
}

function fixedDate(options: GenerateOptions): Date | undefined {
  if (options.date) return parseDateOption(options.date, '--date');
  const epoch = process.env['SOURCE_DATE_EPOCH'];
  if (epoch !== undefined && epoch !== '') {
    if (!/^\d+$/.test(epoch)) throw new UserError(`SOURCE_DATE_EPOCH must be whole seconds since 1970 (found "${epoch}").`);
    return new Date(Number(epoch) * 1000);
  }
  return undefined;
}

const manifestDate = (day: string | undefined) => (day ? new Date(`${day}T00:00:00Z`) : undefined);

/** The date printed in a document already on disk, so an otherwise unchanged document keeps it. */
async function dateOnDisk(root: string, output: string): Promise<Date | undefined> {
  const text = await readInside(root, output).catch(() => undefined);
  const match = text && /Generated by idempotency-builder on (?:<time datetime="(\d{4}-\d{2}-\d{2})">|(\d{4}-\d{2}-\d{2}))/.exec(text);
  const day = match?.[1] ?? match?.[2];
  return day ? new Date(`${day}T00:00:00Z`) : undefined;
}

/** The HTML this project already holds for the document (single file or split pages), for SVG reuse. */
async function readPreviousHtml(root: string, output: string): Promise<string[]> {
  const pages: string[] = [];
  const single = await readInside(root, output).catch(() => undefined);
  if (single !== undefined) pages.push(single);
  const folder = splitFolder(output);
  const names = await assertNoSymlinks(root, folder, 'read')
    .then(() => readdir(resolveInside(root, folder, 'read')))
    .catch(() => [] as string[]);
  for (const name of names.filter((n) => n.endsWith('.html')).sort()) {
    const text = await readInside(root, `${folder}/${name}`).catch(() => undefined);
    if (text !== undefined) pages.push(text);
  }
  return pages;
}

/**
 * The code was already read (init passes its inspection), so the rules cost one more parse and no second inspection.
 * A plain `generate` never reads code: it uses the findings init recorded, or says the code was not checked.
 */
async function snapshotFromCode(cwd: string, config: Config, inspection: InspectionInput, findings: readonly CodeFinding[] | undefined, reviewed: readonly ReviewedCandidate[] | undefined): Promise<ProjectSnapshot> {
  const { auditProject } = await import('./findings/auditProject.js');
  const audited = await auditProject(cwd, { config, inspection: inspection as Pick<Inspection, 'findings'> });
  return snapshotOf({
    inspection,
    codeFindings: findings ?? audited.findings,
    actionFacts: audited.actionFacts,
    reviewed,
    brokers: actionBrokers(config.actions, inspection.findings),
    forms: actionForms(config.actions, inspection.findings),
  });
}

/** What init recorded, with findings passed by a caller (tests, the programmatic API) taking precedence. */
function withFindings(recorded: ProjectSnapshot, findings: readonly CodeFinding[] | undefined): ProjectSnapshot {
  return findings ? snapshotOf({ ...recorded, codeFindings: findings }) : recorded;
}

/**
 * The design for the config and the recorded snapshot: findings and what the code does (init's reading), plus what
 * `apply` wired and left manual (absent until apply has run). One function, so the up-to-date shortcut and the full
 * render describe the same model.
 */
async function designFor(cwd: string, config: Config, snapshot: ProjectSnapshot, now: Date): Promise<DesignModel> {
  const [{ readApplyRecord }, { withWiring }] = await Promise.all([import('./apply/applyRecord.js'), import('./apply/withWiring.js')]);
  const model = buildDesign(config, snapshot.inspection, {
    now,
    ...(snapshot.codeFindings ? { findings: snapshot.codeFindings } : {}),
    ...(snapshot.actionFacts ? { code: snapshot.actionFacts } : {}),
    ...(snapshot.reviewed ? { reviewed: snapshot.reviewed } : {}),
    ...(snapshot.brokers ? { brokers: snapshot.brokers } : {}),
    ...(snapshot.forms ? { forms: snapshot.forms } : {}),
  });
  return withWiring(model, await readApplyRecord(path.resolve(cwd)));
}

interface Rendered {
  files: RenderedFile[];
  model: DesignModel;
  warnings: string[];
  /** The protection snapshot file's text ('' when none), one of the generation's inputs. */
  snapshot: string;
  notes: string[];
}

/**
 * Everything except the document depends only on the inputs, never on the footer date: figures, scaffolding and
 * excerpts are produced once, and `renderFor(date)` renders the (cheap) document around them for each date tried.
 */
async function prepareRender(config: Config, options: GenerateOptions, format: 'html' | 'md', output: string, now: Date): Promise<(date: Date) => Promise<Rendered>> {
  // A project without an SVG cache has never had its figures laid out here, so layout is certain: the worker starts
  // loading the renderer now, while the project is read and the design built (renderFigures ends it if unused).
  // The CLI may have started it already, at its very beginning (cli/prestartLayout); it is used or ended here.
  const diagrams = format === 'html' ? await import('./diagrams/index.js') : undefined;
  const prestarted = claimPrestartedWorker();
  const layoutCertain = diagrams && (options.diagrams ?? diagrams.DEFAULT_RENDERER) === 'beautiful-mermaid' && !existsSync(path.join(path.resolve(options.cwd), CACHE_DIR, 'svg'));
  if (!layoutCertain) prestarted?.close();
  const worker = layoutCertain ? (prestarted ?? diagrams.startLayoutWorker()) : undefined;
  let snapshot: ProjectSnapshot;
  let model: DesignModel;
  try {
    // init passes its inspection (and runs the findings rules); generate reuses what init recorded, so both render
    // the same document.
    snapshot = options.inspection
      ? await snapshotFromCode(options.cwd, config, options.inspection, options.findings, options.reviewed)
      : withFindings(await readSnapshot(path.resolve(options.cwd)), options.findings);
    model = await designFor(options.cwd, config, snapshot, now);
  } catch (error) {
    worker?.close();
    throw error;
  }
  const [{ buildFigures, renderFigures }, { renderDocument }] = await Promise.all([import('./diagrams/index.js'), import('./render/renderDocument.js')]);
  let figures = buildFigures(model);
  // Diagram layout (a worker thread, for the default renderer) runs while the scaffolding is built and formatted.
  let figuresLaidOut: Promise<typeof figures> | undefined;
  if (format === 'html') {
    const previousHtml = await readPreviousHtml(path.resolve(options.cwd), output).catch((error: unknown) => {
      worker?.close();
      throw error;
    });
    figuresLaidOut = renderFigures(figures, {
      renderer: options.diagrams,
      cwd: options.cwd,
      previousHtml,
      cacheRoot: path.resolve(options.cwd),
      writeCache: !options.check && !options.dryRun,
      background: true,
      ...(worker ? { worker } : {}),
    });
    // Awaited below; until then a failure must not surface as an unhandled rejection.
    figuresLaidOut.catch(() => undefined);
  }
  const scaffold = await import('./scaffold/index.js');
  const dir = config.scaffold === false ? undefined : normalizeRelative(config.scaffold.dir);
  // With scaffolding off the files are still planned (in the default folder, not written): the document's code is
  // always excerpts of files this tool generates, never a sketch written for the document alone.
  const scaffoldDir = dir ?? DEFAULT_SCAFFOLD_DIR;
  // One scaffold per package holding protected handlers, each following its tsconfig, package.json and test runner;
  // the reference target (said in the terminal and the document) where the stack has no target of its own.
  const project = await scaffold.scaffoldProject({ root: options.cwd, model, dir: scaffoldDir, packageManager: await scaffold.detectPackageManager(options.cwd) });
  // The plain wrapper that fits (plainFits) is said once in the design already (src/model/stack.ts), as an assumption.
  if (project.reference && !plainFits(model)) model.assumptions.push(referenceNote(model, scaffoldDir, project.reference, dir !== undefined));
  const { completeSamples, excerptText } = await import('./render/code/index.js');
  const excerpts = completeSamples(documentSamples(project.excerpts), project.files);
  const shown = new Set(Object.values(excerpts).map((excerpt) => excerpt.path));
  // Scaffolding is formatted first so the document can embed exactly the bytes that land on disk (when it is off,
  // only the files the document shows).
  const formatted = await formatFiles(
    project.files
      .filter((file) => dir !== undefined || shown.has(file.path))
      .map((file) => ({ path: file.path, contents: file.contents, class: file.class, formatted: file.formatted, ...(file.editOf === undefined ? {} : { editOf: file.editOf }) })),
    options.cwd,
    { writeCache: !options.check && !options.dryRun },
  );
  // Then the project's own ESLint settles what its rules say (semicolons, quotes), so `npm run lint` passes on the
  // files as written; the document embeds the same bytes, and --check compares them.
  const linted = dir === undefined ? { files: formatted, adjusted: 0, linted: 0 } : await lintScaffoldFiles(path.resolve(options.cwd), formatted);
  const code = linted.files;
  if (figuresLaidOut) figures = await figuresLaidOut;
  for (const excerpt of Object.values(excerpts)) {
    const file = code.find((candidate) => candidate.path === excerpt.path);
    if (file) Object.assign(excerpt, { code: excerptText(excerpt, file.contents), formatted: true });
  }
  model.scaffold = scaffoldFacts(scaffoldDir, project.files.map((file) => file.path), dir !== undefined, project.reference);
  // The store the document shows is now known (the reference target's where the stack has none of its own).
  model.constraints = checkConstraints(model);
  const scaffoldFiles = dir === undefined ? [] : code;
  const warnings = dir && scaffoldFiles.length === 0 ? [scaffoldUnavailable(model, dir, scaffold.SCAFFOLD_TARGETS.map((target) => target.label))] : [];
  if (dir && project.reference && !plainFits(model)) warnings.push(referenceNote(model, dir, project.reference, true));
  const notes = dir === undefined ? [] : [...(project.reference && plainFits(model) ? [referenceNote(model, dir, project.reference, true)] : []), ...project.notes, ...(linted.linted > 0 ? [eslintNote(linted.adjusted, linted.linted)] : [])];
  const { assertDocumentVerified } = await import('./verify/index.js');

  return async (date: Date) => {
    const dated: DesignModel = { ...model, generatedOn: date.toISOString().slice(0, 10) };
    // Documents are emitted as rendered: prettier only padded Markdown tables (wider lines, no clearer text) at a
    // cost larger than rendering them. Formatting is for code the user keeps.
    const documentFiles = await renderDocument(dated, { format, output, figures, excerpts, split: options.split ?? config.split });
    // Verify exactly what would be written (formatted, in memory) so a broken document is never delivered.
    assertDocumentVerified(documentFiles);
    const snapshotFiles = snapshotFile(snapshot);
    return { files: [...documentFiles, ...scaffoldFiles, ...snapshotFiles], model: dated, warnings, notes, snapshot: snapshotFiles[0]?.contents ?? '' };
  };
}

/** Said after generate ran the project's ESLint over the scaffold. */
function eslintNote(adjusted: number, linted: number): string {
  const files = (count: number) => `${count} scaffold file${count === 1 ? '' : 's'}`;
  return adjusted === 0
    ? `The project's ESLint (--fix) found nothing to change in the ${files(linted)} it lints.`
    : `The project's ESLint (--fix) adjusted ${adjusted} of the ${files(linted)} it lints to its rules.`;
}

const checkCancelled = (signal: AbortSignal | undefined) => {
  if (signal?.aborted) throw new CancelledError('Cancelled; nothing was written.');
};

/**
 * Renders everything in memory, compares with disk, then writes unless checking or dry-running. A writing run holds
 * the project lock from before it reads the manifest until the manifest is written, so two runs cannot interleave.
 */
export async function generate(options: GenerateOptions): Promise<GenerateResult> {
  const root = path.resolve(options.cwd);
  const { config, text: configText } = await loadConfig(root, options.config);
  const format = options.format ?? config.format;
  // One spelling per file (`./docs/x.html` is `docs/x.html`), confined to the project, before anything is read.
  const output = normalizeRelative(resolveOutput(config, format, options.out));
  const writes = !options.check && !options.dryRun;
  if (options.check && options.accept?.length) throw new UserError('--accept records a decision in the manifest, so it cannot be combined with --check.', 'Run `idempotency-builder generate --accept PATH` first, then check.');
  checkCancelled(options.signal);
  const release = writes ? await acquireProjectLock(root) : undefined;
  const cache = writes ? deferCacheWrites() : undefined;
  try {
    const result = await generateLocked(root, { config, configText, format, output }, options);
    // The formatter's and the layouts' cache entries land only after the project's own files did.
    await cache?.flush();
    return result;
  } finally {
    cache?.discard();
    await release?.();
  }
}

interface Target {
  config: Config;
  configText: string;
  format: 'html' | 'md';
  output: string;
}

/** What the inputs key covers besides the snapshot, the date and the file list (see emit/inputsKey.ts). */
export function keyInputs(configText: string, format: 'html' | 'md', output: string, options: Pick<GenerateOptions, 'split' | 'diagrams'>) {
  return { configText: normalizeText(configText), format, output, ...(options.split ? { split: options.split } : {}), ...(options.diagrams ? { diagrams: options.diagrams } : {}) };
}

async function generateLocked(root: string, target: Target, options: GenerateOptions): Promise<GenerateResult> {
  const { config, format, output } = target;
  const clock = options.now ?? (() => new Date());
  let date = fixedDate(options);
  const reused = await reuseUpToDate(root, target, options, date);
  if (reused) return reused;
  const renderFor = await prepareRender(config, options, format, output, date ?? clock());
  checkCancelled(options.signal);
  let rendered: Rendered | undefined;
  let plan: PlannedWrite[] | undefined;
  if (!date) {
    // Keep the date already on disk while nothing else changed; a real change gets today's date.
    // A split folder has no single file to read the date from; the manifest remembers it for every layout.
    const previous = (await dateOnDisk(root, output)) ?? manifestDate((await readManifest(root)).date);
    if (previous) {
      rendered = await renderFor(previous);
      plan = await planWrites(root, rendered.files, { force: options.force, accept: options.accept });
      // The document is the single file or, when split, every file in the folder named after it.
      const folder = `${splitFolder(output)}/`;
      const documentItems = plan.filter((item) => item.path === output || item.path.startsWith(folder));
      if (documentItems.length === 0 || documentItems.some((item) => item.action !== 'unchanged')) {
        rendered = undefined;
        plan = undefined;
      } else date = previous;
    }
    date ??= clock();
  }
  rendered ??= await renderFor(date);
  plan ??= await planWrites(root, rendered.files, { force: options.force, accept: options.accept });
  checkCancelled(options.signal);
  const written = !options.check && !options.dryRun;
  if (written) {
    const generatedOn = rendered.model.generatedOn;
    // Only a design made from the config and the recorded snapshot alone is recorded as reproducible from them.
    const inputs = rendered.warnings.length === 0 ? await inputsKey(root, { ...keyInputs(target.configText, format, output, options), snapshot: rendered.snapshot, date: generatedOn, files: rendered.files.map((file) => file.path) }) : undefined;
    await applyPlan(root, plan, { date: generatedOn, inputs, signal: options.signal });
  }
  // A split document is delivered as its folder; report that path, not the single file it replaced.
  const document = rendered.files.some((file) => file.path === output) ? output : `${splitFolder(output)}/`;
  return { plan, model: rendered.model, document, written, warnings: rendered.warnings, notes: rendered.notes };
}


/**
 * Nothing changed since the last full run (emit/upToDate.ts): the result is built from the manifest, and only the
 * (cheap) model is computed, for callers that read it. An inspection or findings passed in are inputs the key does
 * not cover, so those runs always render.
 */
async function reuseUpToDate(root: string, target: Target, options: GenerateOptions, fixed: Date | undefined): Promise<GenerateResult | undefined> {
  if (options.dryRun || options.force || options.accept?.length || options.inspection || options.findings) return undefined;
  const found = await upToDateByInputs(root, { ...keyInputs(target.configText, target.format, target.output, options), ...(fixed ? { date: fixed.toISOString().slice(0, 10) } : {}) });
  if (!found) return undefined;
  const snapshot = await readSnapshot(root);
  const model = await designFor(root, target.config, snapshot, new Date(`${found.date}T00:00:00Z`));
  // A rerun that writes finds nothing to write, as the full run would; the manifest already holds this key.
  return { plan: found.plan, model: { ...model, generatedOn: found.date }, document: found.document, written: !options.check, warnings: [], notes: [] };
}
