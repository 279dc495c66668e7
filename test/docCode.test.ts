import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate, type GenerateResult } from '../src/generate.js';
import type { DesignModel } from '../src/model/types.js';
import { fixtureNames, NOW, rawFixture, ROOT } from './helpers/fixtures.js';

/**
 * Every code block in the document is an excerpt of a file the tool generates for that design, titled with the
 * file's path, and the scaffolding it comes from compiles; every name the prose puts in code (files, functions,
 * metrics, SQL) exists in that scaffolding. Over every fixture config, the projects in fixtures/ that carry their
 * own config, and the same design on MySQL and Redis.
 */
const run = promisify(execFile);
const DATE = NOW.toISOString().slice(0, 10);

interface Case {
  label: string;
  /** A config to write into a fresh project, or a fixture project to generate in place (dry run). */
  raw?: Record<string, unknown>;
  project?: string;
}

function onStore(database: string): Record<string, unknown> {
  const raw = structuredClone(rawFixture('express-stripe-payments'));
  (raw.stack as Record<string, unknown>).database = database;
  return raw;
}

const CASES: Case[] = [
  ...fixtureNames().map((name) => ({ label: name, raw: rawFixture(name) })),
  { label: 'express-stripe on MySQL', raw: onStore('mysql') },
  { label: 'express-stripe on Redis', raw: onStore('redis') },
  ...['fixtures/example', 'fixtures/apply/express', 'fixtures/apply/fastify', 'fixtures/apply/nestjs']
    .filter((dir) => existsSync(path.join(ROOT, dir, 'idempotency.config.json')))
    .map((dir) => ({ label: dir, project: dir })),
];

interface CodeBlock {
  title: string | undefined;
  language: string;
  code: string;
}

const MD_BLOCK = /(?:^`([^`\n]+)`\n\n)?^(`{3,})([a-z0-9+-]*)\n([\s\S]*?)\n\2$/gm;

function markdownBlocks(text: string): CodeBlock[] {
  return [...text.matchAll(MD_BLOCK)].map((m) => ({ title: m[1], language: m[3]!, code: m[4]! })).filter((b) => b.language !== 'mermaid');
}

const unescapeHtml = (text: string) =>
  text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#x27;/g, "'").replace(/&amp;/g, '&');

function htmlBlocks(text: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  for (const m of text.matchAll(/(?:<div class="code-title">([^<]*)<\/div>\n)?<pre><code class="language-([^"]*)">([\s\S]*?)<\/code><\/pre>/g)) {
    blocks.push({ title: m[1] === undefined ? undefined : unescapeHtml(m[1]), language: m[2]!, code: unescapeHtml(m[3]!) });
  }
  return blocks;
}

/** The code spans of the Markdown prose (fenced blocks removed), as the reader sees them. */
function proseCodeSpans(text: string): string[] {
  const prose = text.replace(/^(`{3,})[a-z0-9+-]*\n[\s\S]*?\n\1$/gm, '');
  const spans: string[] = [];
  for (const m of prose.matchAll(/(`+)( ?)([^`]|[^`][\s\S]*?[^`])\2\1(?!`)/g)) spans.push(m[3]!.replace(/\\\|/g, '|'));
  return spans;
}

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Names in the prose that come from the user's own code and config, not from the scaffolding. */
function userNames(model: DesignModel): Set<string> {
  const names = new Set<string>();
  const add = (value: string | undefined) => {
    if (value) names.add(value);
  };
  for (const action of model.actions) {
    add(action.name);
    add(action.route);
    add(action.source);
    for (const field of action.significantFields) add(field);
    add(action.key.format);
    add(action.key.example);
    for (const finding of action.findings) add(finding.location);
    for (const edit of action.wiring?.applied ?? []) add(edit.file);
    for (const step of action.wiring?.manual ?? []) add(step.file && step.line ? `${step.file}:${step.line}` : step.file);
  }
  for (const provider of model.providers) add(provider.example);
  for (const step of model.sagas.flatMap((saga) => saga.steps)) {
    add(step.subKeyExample);
    add(step.providerKeyExample);
  }
  for (const step of model.proposedSagas.flatMap((saga) => saga.steps)) {
    add(step.call);
    add(step.location);
    add(step.compensationCall);
  }
  for (const finding of model.findings) add(finding.location);
  for (const existing of model.existingProtection) add(`${existing.file}:${existing.line}`);
  return names;
}

/** Fields of what the user's handlers receive from a provider or broker (a Stripe event, a BullMQ job). */
const RECEIVED_FIELDS = new Set(['event.id', 'job.id']);

/** The tool's own commands, which the document tells the reader to run. */
const TOOL_COMMAND = /^idempotency-builder( [a-z-]+)+$/;

interface Rendered {
  result: GenerateResult;
  markdown: string;
  /** Every document file of the split HTML folder. */
  htmlPages: string[];
  /** The generated files the document's code comes from (written, or what generate writes when scaffolding is on). */
  files: Map<string, string>;
  /** Folder with the scaffolding written out, for the compiler. */
  compileDir: string;
}

const cleanup: string[] = [];
afterAll(async () => {
  for (const dir of cleanup) await rm(dir, { recursive: true, force: true });
});

async function projectFor(testCase: Case, raw?: Record<string, unknown>): Promise<string> {
  if (testCase.project && !raw) return path.join(ROOT, testCase.project);
  const dir = await mkdtemp(path.join(tmpdir(), 'ib-doccode-'));
  cleanup.push(dir);
  const config = { ...(raw ?? testCase.raw) };
  delete config.$schema;
  await writeFile(path.join(dir, 'idempotency.config.json'), JSON.stringify(config, null, 2));
  return dir;
}

function scaffoldFiles(result: GenerateResult): Map<string, string> {
  const dir = result.model.scaffold?.dir ?? 'src/idempotency';
  return new Map(result.plan.filter((item) => item.class === 'scaffold' || item.path.startsWith(`${dir}/`)).map((item) => [item.path, item.contents]));
}

async function render(testCase: Case): Promise<Rendered> {
  const cwd = await projectFor(testCase);
  const markdown = await generate({ cwd, format: 'md', split: 'never', dryRun: true, date: DATE });
  const html = await generate({ cwd, format: 'html', split: 'always', dryRun: true, date: DATE });
  const doc = markdown.plan.find((item) => item.path === markdown.document)!.contents;
  const htmlPages = html.plan.filter((item) => item.class === 'managed' && item.path.endsWith('.html')).map((item) => item.contents);
  let files = scaffoldFiles(markdown);
  if (!markdown.model.scaffold?.written) {
    // Scaffolding is off: the document shows what generate writes once it is on; generate that to compare.
    const on = { ...(testCase.raw ?? {}), scaffold: { dir: markdown.model.scaffold?.dir ?? 'src/idempotency' } };
    const onResult = await generate({ cwd: await projectFor(testCase, on), format: 'md', split: 'never', dryRun: true, date: DATE });
    files = scaffoldFiles(onResult);
  }
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const compileDir = await mkdtemp(path.join(ROOT, '.tmp', 'doccode-'));
  cleanup.push(compileDir);
  for (const [file, contents] of files) {
    await mkdir(path.dirname(path.join(compileDir, file)), { recursive: true });
    await writeFile(path.join(compileDir, file), contents);
  }
  return { result: markdown, markdown: doc, htmlPages, files, compileDir };
}

/** Strict type-check of the scaffold as generate wrote it (the compiler options of test/scaffold/generateInto.ts). */
async function typeCheck(dir: string, files: readonly string[], model: DesignModel): Promise<string> {
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noUncheckedIndexedAccess: true,
      esModuleInterop: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
      typeRoots: [path.join(ROOT, 'node_modules/@types')],
      ...(model.stack.framework === 'nestjs' ? { experimentalDecorators: true, emitDecoratorMetadata: true } : {}),
    },
    files: files.filter((file) => file.endsWith('.ts')),
  };
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  try {
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

/** Syntax check of generated JavaScript, in the module format it was written for. */
async function syntaxCheck(dir: string, files: readonly string[], rendered: (file: string) => string): Promise<string> {
  const problems: string[] = [];
  const esm = files.some((file) => /^import /m.test(rendered(file)));
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: esm ? 'module' : 'commonjs', private: true }));
  for (const file of files.filter((name) => /\.(js|mjs|cjs)$/.test(name))) {
    try {
      await run(process.execPath, ['--check', path.join(dir, file)], { cwd: dir });
    } catch (error) {
      problems.push(`${file}: ${String((error as { stderr?: string }).stderr ?? error)}`);
    }
  }
  return problems.join('\n');
}

describe.each(CASES)('document code of $label', (testCase) => {
  let rendered: Rendered;
  beforeAll(async () => {
    rendered = await render(testCase);
  }, 300_000);

  it('shows only excerpts of generated files, each under its generated path (Markdown, one file)', () => {
    const blocks = markdownBlocks(rendered.markdown);
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    for (const block of blocks) {
      expect(block.title, `a ${block.language} block without a path`).toBeDefined();
      const file = rendered.files.get(block.title!);
      expect(file, `${block.title} is not a generated file`).toBeDefined();
      expect(normalize(file!).includes(normalize(block.code)), `the block under ${block.title} differs from the generated file`).toBe(true);
    }
  });

  it('shows the same excerpts in the split HTML folder', () => {
    const blocks = rendered.htmlPages.flatMap(htmlBlocks);
    expect(blocks.map((block) => block.title)).toEqual(markdownBlocks(rendered.markdown).map((block) => block.title));
    for (const block of blocks) {
      expect(block.title).toBeDefined();
      expect(normalize(rendered.files.get(block.title!) ?? '').includes(normalize(block.code)), `HTML block under ${block.title}`).toBe(true);
    }
  });

  it('names in code only what the scaffolding or the project contains', () => {
    const own = userNames(rendered.result.model);
    const corpus = normalize([...rendered.files.values()].join('\n'));
    const paths = new Set([...rendered.files.keys()].flatMap((file) => file.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
    const missing = [...new Set(proseCodeSpans(rendered.markdown))].filter(
      (span) => !own.has(span) && !RECEIVED_FIELDS.has(span) && !TOOL_COMMAND.test(span) && !paths.has(span) && !corpus.includes(normalize(span)),
    );
    expect(missing.join("\n")).toBe("");
  });

  it('comes from scaffolding that compiles', async () => {
    const files = [...rendered.files.keys()];
    const javascript = rendered.result.model.stack.language === 'javascript';
    const output = javascript ? await syntaxCheck(rendered.compileDir, files, (file) => rendered.files.get(file) ?? '') : await typeCheck(rendered.compileDir, files, rendered.result.model);
    expect(output).toBe('');
  }, 300_000);
});
