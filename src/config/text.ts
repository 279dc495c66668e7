import path from 'node:path';
import { z } from 'zod';
import { LIMITS } from './limits.js';

/**
 * String shapes shared by the schema. Config text reaches prose, tables, anchors, file names and code, so
 * characters that no renderer can show faithfully are refused here, once, with the reason.
 */

// C0/C1 controls, line and paragraph separators (U+2028/U+2029 end a line in JavaScript and Markdown), bidi
// overrides that make text read differently from what it is, and lone surrogates that are not text at all.
// eslint-disable-next-line no-control-regex -- rejecting control characters is the point
const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]|\p{Cs}/u;
// Names become anchors and identifiers: every format character (zero-width, soft hyphen, bidi) is refused too.
const UNSAFE_NAME = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}]/u;
const HAS_LETTER = /\p{L}/u;

/** Keys that reach prototypes when a name or field is used as an object key anywhere downstream. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export const safeText = (max: number = LIMITS.textLength) =>
  z
    .string()
    .max(max)
    .refine((text) => !UNSAFE_TEXT.test(text), { message: 'expected text without control characters, line separators or bidi overrides' });

export const nameText = z
  .string()
  .min(1)
  .max(LIMITS.nameLength)
  .refine((text) => !UNSAFE_NAME.test(text), { message: 'expected a name without control, format or separator characters' })
  .refine((text) => HAS_LETTER.test(text), { message: 'expected a name with at least one letter, e.g. "createPayment"' })
  .refine((text) => !RESERVED_NAMES.has(text.trim()), { message: 'expected a name other than __proto__, constructor or prototype' });

/** "items[].sku" → ["items", "sku"]. */
export function fieldSegments(field: string): string[] {
  return field.split(/\.|\[\]/).filter((segment) => segment !== '');
}

export const fieldText = z
  .string()
  .min(1)
  .max(LIMITS.fieldLength)
  .regex(/^[^\s]+$/, 'expected a field path without spaces, e.g. "amount" or "items[].sku"')
  .refine((text) => !UNSAFE_NAME.test(text), { message: 'expected a field path without control or format characters' })
  .refine((text) => fieldSegments(text).length > 0, { message: 'expected a field path with a name, e.g. "amount" or "items[].sku"' })
  .refine((text) => fieldSegments(text).every((segment) => !RESERVED_NAMES.has(segment)), {
    message: 'expected a field path without __proto__, constructor or prototype segments',
  });

/** True when a path from the config would land outside the project root (absolute, or climbing out with ".."). */
export function leavesProject(relative: string): boolean {
  const posix = relative.replace(/\\/g, '/');
  if (posix.startsWith('/') || /^[a-z]:/i.test(posix)) return true;
  const normal = path.posix.normalize(posix);
  return normal === '..' || normal.startsWith('../');
}

/** A path relative to the project root that stays inside it; `example` shows the expected shape. */
export const projectPath = (example: string) =>
  safeText(LIMITS.pathLength)
    .min(1)
    .refine((text) => !leavesProject(text), { message: `expected a path inside the project, relative to its root, e.g. "${example}"` })
    .refine((text) => !['.', './'].includes(path.posix.normalize(text.replace(/\\/g, '/'))), { message: `expected a path below the project root, e.g. "${example}"` });
