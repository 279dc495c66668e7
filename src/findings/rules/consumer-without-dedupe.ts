import { freshClaim } from '../freshClaim.js';
import type { ProjectReport, Rule } from '../types.js';

/** Brokers redeliver after a crash or a missed ack: a consumer that does not remember message ids applies one twice. */
export const consumerWithoutDedupe: Rule = {
  id: 'consumer-without-dedupe',
  severity: 'warning',
  title: 'Message consumer without message-id dedupe',
  description:
    'The consumer applies each message without recording its id. Every broker here delivers at least once: a worker ' +
    'that crashes or times out after the side effect but before the ack gets the same message again, and so does another worker after a rebalance.',
  fix: 'Record the message id (or a business key from the payload) in a table with a unique constraint in the same transaction as the consumer\'s writes, and skip messages already recorded.',
  docsAnchor: 'finding-consumer-without-dedupe',
  checkProject(ctx) {
    const out: ProjectReport[] = [];
    for (const finding of ctx.inspection?.findings ?? []) {
      if (finding.kind !== 'consumer' || finding.dedupes) continue;
      const text = ctx.sources.find((s) => s.rel === finding.file)?.text ?? '';
      out.push({
        file: finding.file,
        line: finding.line,
        evidence: text.split('\n')[finding.line - 1]?.trim() ?? '',
        message: `${finding.broker} consumer${finding.queue ? ` of ${finding.queue}` : ''}${finding.via ? ` (registered through ${finding.via.name}, ${finding.via.file}:${finding.via.line})` : ''} applies messages without recording their id: a redelivery runs it twice.${freshClaim(finding.perAttemptClaim)}`,
      });
    }
    return out;
  },
};
