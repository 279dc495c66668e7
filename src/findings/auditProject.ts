import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CONFIG_FILE, parseConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { parseSource } from '../inspect/parse/parseSource.js';
import { isFrontEndPath } from '../inspect/files/isFrontEnd.js';
import { walkProject } from '../inspect/files/walkProject.js';
import { VIEW_TEMPLATE } from '../inspect/files/classifyPath.js';
import type { Inspection } from '../inspect/types.js';
import type { ActionCodeFacts } from '../model/codeFacts.js';
import { actionFacts } from './actionFacts.js';
import { consumersAndCrons } from './localInspection.js';
import { runRules } from './runRules.js';
import { readSchemaFacts, SCHEMA_IN_CODE, type SchemaFacts } from './schemaFacts.js';
import type { CodeFinding, ProjectContext, SourceContext } from './types.js';
import { tsconfigAliasesAt } from '../scaffold/profile/pathAliases.js';

export interface AuditOptions {
  /** Use this config instead of reading idempotency.config.json (or none: `null`). */
  config?: Config | null;
  /** Reuse an inspection already made (generate has one); otherwise consumers and crons are found on the same parse. */
  inspection?: Pick<Inspection, 'findings'>;
}

export interface AuditResult {
  root: string;
  findings: CodeFinding[];
  /** What each configured action's code does (handler, calls, writes, client time-outs), for the design. */
  actionFacts: ActionCodeFacts[];
  filesScanned: number;
  warnings: string[];
}

const USE_CLIENT = /^\s*(?:\/\/[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*['"]use client['"]/;

/** Reads a project from disk, runs every rule, returns findings. Writes nothing. */
export async function auditProject(dir: string, options: AuditOptions = {}): Promise<AuditResult> {
  const root = path.resolve(dir);
  const walked = await walkProject(root);
  const dependencies = await projectDependencies(root);
  const usesNext = dependencies.has('next');
  const configText = await readFile(path.join(root, CONFIG_FILE), 'utf8').catch(() => undefined);
  const config = options.config === null ? undefined : (options.config ?? (configText !== undefined ? parseConfig(configText) : undefined));
  const generatedDir = config && config.scaffold !== false ? config.scaffold.dir.replace(/^\.\//, '').replace(/\/$/, '') : undefined;

  const auxiliary = new Map<string, string>();
  if (configText !== undefined) auxiliary.set(CONFIG_FILE, configText);
  const schemaTexts = new Map<string, string>();
  const texts: Array<[string, string]> = [];
  for (const file of walked.files) {
    // Synchronously, as inspect does: the promise API's round trips through libuv's threads cost five times as much.
    const text = readText(file.abs);
    if (text === undefined) continue;
    if (file.kind === 'auxiliary') {
      auxiliary.set(file.rel, text);
      if (!file.rel.endsWith('.json') && !VIEW_TEMPLATE.test(file.rel)) schemaTexts.set(file.rel, text);
      continue;
    }
    if (generatedDir && file.rel.startsWith(`${generatedDir}/`)) continue;
    if (SCHEMA_IN_CODE.test(text)) schemaTexts.set(file.rel, text);
    if (isFrontEndPath(file.rel, usesNext) || USE_CLIENT.test(text)) continue;
    texts.push([file.rel, text]);
  }
  const schema = readSchemaFacts(schemaTexts);
  const lazy = texts.map(([rel, text]) => lazySource(rel, text, schema, dependencies, config?.stack.database));
  const sources: SourceContext[] = lazy.map((l) => l.source);
  const release = new Map(lazy.map((l) => [l.source, l.release]));
  // generate passes the inspection init made; `audit` alone finds consumers and crons on the same sources.
  const inspection = options.inspection ?? consumersAndCrons(sources, auxiliary);
  const ctx: ProjectContext = { sources, schema, auxiliary, dependencies, inspection, aliases: tsconfigAliasesAt(root), ...(config ? { config } : {}) };
  // Each tree is let go once every rule has seen its file; actionFacts parses again the few files it reads.
  const findings = runRules(ctx, undefined, (source) => release.get(source)?.());
  return { root, findings, actionFacts: actionFacts(ctx), filesScanned: sources.length, warnings: walked.warnings };
}

/**
 * A source whose tree is parsed on first use and kept until `release`: rules test the text first, so files no rule
 * wants are never parsed, and a tree every rule has seen is not kept alive (holding all of them made the GC a fifth
 * of `audit`).
 */
function lazySource(rel: string, text: string, schema: SchemaFacts, dependencies: ReadonlyMap<string, string>, database: string | undefined): { source: SourceContext; release: () => void } {
  let sf: SourceContext['sf'] | undefined;
  const source: SourceContext = {
    rel,
    text,
    schema,
    dependencies,
    ...(database !== undefined ? { database } : {}),
    get sf() {
      sf ??= parseSource(rel, text).sf;
      return sf;
    },
  };
  return {
    source,
    release: () => {
      sf = undefined;
    },
  };
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** package.json's dependencies and devDependencies by name (the provider SDKs the rules recognise), empty without one. */
export async function projectDependencies(root: string): Promise<Map<string, string>> {
  const manifest = await readJson(path.join(root, 'package.json'));
  return new Map<string, string>(Object.entries({ ...(manifest?.devDependencies ?? {}), ...(manifest?.dependencies ?? {}) }).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

async function readJson(file: string): Promise<{ dependencies?: Record<string, unknown>; devDependencies?: Record<string, unknown> } | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as { dependencies?: Record<string, unknown> };
  } catch {
    return undefined;
  }
}

