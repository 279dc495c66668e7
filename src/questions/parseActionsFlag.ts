import { readFileSync } from 'node:fs';
import path from 'node:path';
import { actionSchema } from '../config/schema.js';
import { formatPath } from '../config/load.js';
import { UserError } from '../errors.js';
import type { ActionAnswer } from './types.js';

const EXAMPLE = `--actions '[{"name":"createPayment","trigger":"http","route":"POST /payments","significantFields":["amount","currency"]}]'`;

/**
 * --actions takes inline JSON (starts with "[" or "{") or a path to a JSON file: an array of actions,
 * one action, or an object with an "actions" array (so a whole config file works too).
 */
export function parseActionsFlag(value: string, cwd: string): ActionAnswer[] {
  const text = value.trim();
  let raw: unknown;
  if (text.startsWith('[') || text.startsWith('{')) {
    raw = parseJson(text, '--actions');
  } else {
    const file = path.resolve(cwd, text);
    let contents: string;
    try {
      contents = readFileSync(file, 'utf8');
    } catch {
      throw new UserError(`--actions "${value}" is neither JSON nor a readable file.`, `Pass inline JSON, e.g. ${EXAMPLE}, or a path to a JSON file.`);
    }
    raw = parseJson(contents, `--actions file ${text}`);
  }
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && 'actions' in raw) raw = (raw as { actions: unknown }).actions;
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length === 0) throw new UserError('--actions is an empty list.', `Name at least one action, e.g. ${EXAMPLE}.`);
  return list.map((item, index) => {
    const result = actionSchema.safeParse(item);
    if (result.success) return item as ActionAnswer;
    const problems = result.error.issues.map((issue) => `${formatPath([index, ...issue.path])}: ${issue.message}`);
    throw new UserError(`--actions is invalid:\n  ${problems.join('\n  ')}`, `Each action needs at least name, trigger and significantFields, e.g. ${EXAMPLE}.`);
  });
}

function parseJson(text: string, label: string): unknown {
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new UserError(`${label} is not valid JSON: ${(error as Error).message}.`, `Example: ${EXAMPLE}.`);
  }
}
