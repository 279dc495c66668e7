import { parseDuration, DURATION_HELP } from '../config/duration.js';
import { UserError } from '../errors.js';

/** One enum value from a flag, or a usage error that names the flag and lists what is allowed. */
export function parseChoice<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  const normalized = value.trim().toLowerCase();
  const found = allowed.find((choice) => choice === normalized);
  if (!found) throw new UserError(`${flag} "${value}" is not allowed.`, `Use one of: ${allowed.join(', ')}.`);
  return found;
}

/** A comma-separated list from a flag; "none" (or an empty string) means the empty list. */
export function parseList<T extends string>(flag: string, value: string, allowed: readonly T[]): T[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 1 && items[0]?.toLowerCase() === 'none') return [];
  return [...new Set(items.map((item) => parseChoice(flag, item, allowed)))];
}

export function parseDurationFlag(flag: string, value: string): string {
  const text = value.trim();
  if (parseDuration(text) === undefined) throw new UserError(`${flag} "${value}" is not a duration.`, `Write ${DURATION_HELP}.`);
  return text;
}

/** Validation for a text prompt: true, or why the duration is not accepted. */
export function validateDuration(text: string): true | string {
  return parseDuration(text.trim()) === undefined ? `Write ${DURATION_HELP}.` : true;
}
