import type { Finding } from '../types.js';
import type { ProjectRecords } from './projectRecords.js';
import { resolveBinding, splitBindingKey } from './resolveModules.js';

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Queue and job names a consumer gave as a constant of another file (`@Processor(PAYMENT_QUEUE_NAME)`, whose module
 * says `export const PAYMENT_QUEUE_NAME = 'payment'`) become that constant's string, so the action is named for the
 * queue (`consumePayment`) and its route is what the broker knows. A name no import leads to a string stays as written.
 */
export function resolveImportedNames(records: ProjectRecords, findings: readonly Finding[]): void {
  const valueOf = (file: string, name: string): string | undefined => {
    if (!IDENTIFIER.test(name) || !records.files.get(file)?.imports.has(name)) return undefined;
    const target = splitBindingKey(resolveBinding(records, file, name));
    return records.files.get(target.file)?.stringConsts.get(target.name);
  };
  const resolved = (file: string, names: string) => names.split(',').map((name) => valueOf(file, name) ?? name).join(',');
  for (const finding of findings) {
    if (finding.kind !== 'consumer') continue;
    if (finding.queue !== undefined) finding.queue = resolved(finding.file, finding.queue);
    if (finding.job !== undefined) finding.job = resolved(finding.file, finding.job);
  }
}
