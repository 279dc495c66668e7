import type { ProjectRecords } from './projectRecords.js';
import { resolveImport } from './resolveModules.js';

/**
 * The functions that send a message, as (file, function key) seeds for reachability by library: sends on a client the
 * file makes, and sends on a client imported from a project module that exports one of that library under that name.
 */
export function messageSeeds(records: ProjectRecords): Map<string, Array<[string, string]>> {
  const seeds = new Map<string, Array<[string, string]>>();
  const add = (library: string, file: string, key: string) => {
    const list = seeds.get(library);
    if (list) list.push([file, key]);
    else seeds.set(library, [[file, key]]);
  };
  for (const record of records.files.values()) {
    for (const { key, library } of record.facts.messageFunctions) add(library, record.rel, key);
    for (const pending of record.facts.importedMessageSends) {
      const target = resolveImport(records, record.rel, pending.module);
      const exported = target === undefined ? undefined : records.files.get(target)?.facts.messageClients;
      if (exported?.some((c) => c.name === pending.name && c.library === pending.library)) for (const key of pending.keys) add(pending.library, record.rel, key);
    }
  }
  return new Map([...seeds].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
