import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_FILE } from '../config/choices.js';
import { CACHE_DIR } from '../emit/diskCache.js';

/**
 * Whether this command line is a `generate` that will certainly lay diagrams out with the default renderer: HTML
 * (flag, else the config's format, whose default is HTML) and no SVG cache in the project yet (the same test generate
 * makes). Read from the raw arguments before commander or generate load; a wrong guess costs only an unused worker,
 * since generate decides for itself whether to use it.
 */
export function layoutCertain(args: readonly string[]): boolean {
  if (args[0] !== 'generate' || args.includes('--help') || args.includes('-h')) return false;
  const value = (name: string): string | undefined => {
    for (let i = 1; i < args.length; i++) {
      const arg = args[i]!;
      if (arg === name) return args[i + 1];
      if (arg.startsWith(`${name}=`)) return arg.slice(name.length + 1);
    }
    return undefined;
  };
  if ((value('--diagrams') ?? 'beautiful-mermaid') !== 'beautiful-mermaid') return false;
  const cwd = path.resolve(value('--cwd') ?? '.');
  if (existsSync(path.join(cwd, CACHE_DIR, 'svg'))) return false;
  return (value('--format') ?? configuredFormat(path.resolve(cwd, value('--config') ?? CONFIG_FILE))) === 'html';
}

function configuredFormat(file: string): unknown {
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as { format?: unknown } | null;
    return raw?.format ?? 'html';
  } catch {
    return undefined;
  }
}
