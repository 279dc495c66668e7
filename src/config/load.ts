import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { UserError } from '../errors.js';
import { CONFIG_FILE } from './choices.js';
import { findTooDeep } from './findTooDeep.js';
import { LIMITS } from './limits.js';
import { configSchema, type Config } from './schema.js';

export { CONFIG_FILE };

/** Where `$schema` points inside a project that installed the package. */
export const SCHEMA_REF = './node_modules/idempotency-builder/schema/idempotency.config.schema.json';

export interface LoadedConfig {
  config: Config;
  /** Absolute path of the file it came from. */
  file: string;
  /** The file's text, exactly as validated. */
  text: string;
}

export async function loadConfig(cwd: string, configPath?: string): Promise<LoadedConfig> {
  const file = path.resolve(cwd, configPath ?? CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new UserError(
        `No config found at ${path.relative(cwd, file) || file}.`,
        'Run `idempotency-builder init` to create one, or pass --config FILE.',
      );
    }
    throw new UserError(`Cannot read ${file}: ${(error as Error).message}.`);
  }
  return { config: parseConfig(text, path.relative(cwd, file) || file), file, text };
}

/** Parses and validates config text; every problem is reported with its JSON path. */
export function parseConfig(text: string, label = CONFIG_FILE): Config {
  if (text.length > LIMITS.fileBytes) {
    throw new UserError(
      `${label} is ${Math.round(text.length / 1024 / 1024)} MB; a config is at most ${LIMITS.fileBytes / 1024 / 1024} MB.`,
      'Check that the file is the config and not generated data; a design for 500 fully described actions takes about 1.5 MB.',
    );
  }
  // Before parsing: a value nested thousands deep must be refused, not overflow the stack later.
  const deep = findTooDeep(text, LIMITS.jsonDepth);
  if (deep) {
    throw new UserError(
      `${label} is invalid:\n  ${formatPath(deep)}: nested more than ${LIMITS.jsonDepth} levels deep; a config is at most 5 levels deep`,
      'Remove the extra nesting; the JSON Schema in the "$schema" link shows the shape of every key.',
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new UserError(`${label} is not valid JSON: ${(error as Error).message}.`, 'Fix the syntax; the file must be plain JSON (no comments, no trailing commas).');
  }
  return validateConfig(raw, label);
}

export function validateConfig(raw: unknown, label = CONFIG_FILE): Config {
  const result = configSchema.safeParse(raw);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${describeIssue(issue, raw)}`);
  throw new UserError(
    `${label} is invalid:\n${lines.join('\n')}`,
    'Correct the values above; the JSON Schema in the "$schema" link lists every key.',
  );
}

export function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    // Keys come from the user's file: anything but a plain name is quoted, so no control character reaches the terminal.
    else if (!/^[A-Za-z_$][\w$]*$/.test(String(segment))) out += `[${JSON.stringify(String(segment))}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out === '' ? '(root)' : out;
}

function valueAt(raw: unknown, segments: readonly PropertyKey[]): { found: boolean; value: unknown } {
  let current: unknown = raw;
  for (const segment of segments) {
    // Own properties only: a key such as "constructor" must not resolve through the prototype.
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, segment)) return { found: false, value: undefined };
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return { found: true, value: current };
}

function show(value: unknown): string {
  if (typeof value === 'string' && value.length > 57) return `${JSON.stringify(value.slice(0, 57))}...`;
  if (Array.isArray(value) && value.length > 3) return `[${value.length} items]`;
  const text = JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys
      .map((key) => `${formatPath([...issue.path, key])}: unknown key; remove it or check its spelling`)
      .join('\n  ');
  }
  const where = formatPath(issue.path);
  const { found, value } = valueAt(raw, issue.path);
  const foundText = found ? `found ${show(value)}` : 'missing';
  let allowed: string;
  switch (issue.code) {
    case 'invalid_value':
      allowed = `allowed: ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
      break;
    case 'invalid_type':
      allowed = `expected ${issue.expected}`;
      break;
    case 'too_small':
      allowed =
        issue.origin === 'array'
          ? `expected at least ${String(issue.minimum)} item(s)`
          : issue.origin === 'string'
            ? `expected at least ${String(issue.minimum)} character(s)`
            : `expected at least ${String(issue.minimum)}`;
      break;
    case 'too_big':
      allowed =
        issue.origin === 'array'
          ? `expected at most ${String(issue.maximum)} item(s); the limit keeps generation fast, so split the design per service or drop what is not critical`
          : issue.origin === 'string'
            ? `expected at most ${String(issue.maximum)} characters; shorten it`
            : `expected at most ${String(issue.maximum)}`;
      break;
    default:
      allowed = issue.message;
  }
  if (issue.code === 'invalid_union') allowed = 'expected false or an object like { "dir": "src/idempotency" }';
  if (issue.message.startsWith('expected at least one')) allowed = issue.message;
  return `${where}: ${foundText}; ${allowed}`;
}
