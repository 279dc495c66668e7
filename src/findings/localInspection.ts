import { textDetectors } from '../inspect/detectors/auxiliaryFiles.js';
import { consumers } from '../inspect/detectors/consumers.js';
import { crons } from '../inspect/detectors/crons.js';
import { emptyFacts } from '../inspect/detectors/detectorTypes.js';
import type { Finding, Inspection } from '../inspect/types.js';
import { fileContext } from './providerCalls.js';
import type { SourceContext } from './types.js';

/** Brokers a package depends on, for the consumer detector's NestJS microservice fallback. */
const BROKER_PACKAGES: Record<string, string> = { kafkajs: 'kafka', amqplib: 'rabbitmq', 'amqp-connection-manager': 'rabbitmq', nats: 'nats', bullmq: 'bullmq', bull: 'bull', '@aws-sdk/client-sqs': 'sqs' };

/**
 * What the project rules need from an inspection (message consumers and scheduled jobs), found by the inspector's own
 * detectors on the files `audit` already parsed: one walk and one parse per file instead of a second full inspection.
 */
export function consumersAndCrons(sources: readonly SourceContext[], auxiliary: ReadonlyMap<string, string>): Pick<Inspection, 'findings'> {
  const findings: Finding[] = [];
  for (const source of sources) {
    const wanted = [consumers, crons].filter((d) => d.mentions.test(source.text));
    if (wanted.length === 0) continue;
    const ctx = fileContext(source);
    const brokers = [...new Set([...source.dependencies.keys()].flatMap((dep) => (Object.hasOwn(BROKER_PACKAGES, dep) ? [BROKER_PACKAGES[dep] as string] : [])))].sort();
    const withBrokers = { ...ctx, pkg: { ...ctx.pkg, stack: { ...ctx.pkg.stack, brokers } } };
    const facts = emptyFacts();
    for (const detector of wanted) {
      try {
        detector.detect(withBrokers, facts);
      } catch {
        // A file the detector cannot handle is skipped here as the inspector skips it (with a warning there).
      }
    }
    findings.push(...facts.findings.filter((f) => f.kind === 'consumer' || f.kind === 'cron'));
  }
  for (const [rel, text] of auxiliary) {
    const name = rel.slice(rel.lastIndexOf('/') + 1);
    for (const detector of textDetectors) if (detector.accepts(name)) findings.push(...detector.detect(rel, text).filter((f) => f.kind === 'cron'));
  }
  return { findings };
}
