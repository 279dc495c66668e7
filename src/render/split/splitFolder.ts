import path from 'node:path';

/** docs/idempotency-design.html → docs/idempotency-design: the folder that replaces the single file. */
export function splitFolder(output: string): string {
  const ext = path.posix.extname(output);
  return ext === '' ? `${output}.d` : output.slice(0, -ext.length);
}

/** The index file of a split folder for a format. */
export function splitIndexName(format: 'html' | 'md'): string {
  return format === 'md' ? 'README.md' : 'index.html';
}
