import type { ScaffoldFacts } from './types.js';

/**
 * The facts the document states about the scaffolding, read from the list of files generated for the design, so
 * a sentence about a file exists exactly when the file does (the planning that chose the files is the scaffold's).
 */
export function scaffoldFacts(dir: string, paths: readonly string[], written: boolean, reference?: string): ScaffoldFacts {
  const files = [...paths].sort();
  const prefix = dir === '' ? '' : `${dir}/`;
  const find = (relative: RegExp) => files.find((file) => file.startsWith(prefix) && relative.test(file.slice(prefix.length)));
  const reconcileJob = find(/^reconcile\/job\.(ts|js|mjs|cjs)$/);
  const reconcileLookups: ScaffoldFacts['reconcileLookups'] = {};
  for (const provider of ['stripe', 'adyen', 'paypal']) {
    const file = find(new RegExp(`^reconcile/${provider}\\.(ts|js|mjs|cjs)$`));
    if (file) reconcileLookups[provider] = file;
  }
  return { dir, written, files, ...(reference ? { reference } : {}), ...(reconcileJob ? { reconcileJob } : {}), reconcileLookups };
}
