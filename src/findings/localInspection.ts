import { textDetectors } from '../inspect/detectors/auxiliaryFiles.js';
import { consumers } from '../inspect/detectors/consumers.js';
import { crons } from '../inspect/detectors/crons.js';
import { emptyFacts, type ConsumerWrapper } from '../inspect/detectors/detectorTypes.js';
import { stringValue } from '../inspect/parse/astHelpers.js';
import { expandConsumerWrappers, type CallerFile } from '../inspect/resolve/consumerWrappers.js';
import { resolveSpecifier, type ModuleFiles } from '../inspect/resolve/resolveModules.js';
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
  const wrappers: Array<{ rel: string; wrapper: ConsumerWrapper }> = [];
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
    wrappers.push(...facts.consumerWrappers.map((wrapper) => ({ rel: source.rel, wrapper })));
  }
  if (wrappers.length > 0) {
    const wrapped = expandConsumerWrappers(wrappers, callerFiles(sources));
    findings.splice(0, findings.length, ...findings.filter((f) => !wrapped.replaced.has(f)), ...wrapped.added);
  }
  for (const [rel, text] of auxiliary) {
    const name = rel.slice(rel.lastIndexOf('/') + 1);
    for (const detector of textDetectors) if (detector.accepts(name)) findings.push(...detector.detect(rel, text).filter((f) => f.kind === 'cron'));
  }
  return { findings };
}

/** The parsed sources as callers of a consumer wrapper: relative and alias imports resolved among them, through index re-exports. */
function callerFiles(sources: readonly SourceContext[]): CallerFile[] {
  const byRel = new Map(sources.map((s) => [s.rel, s]));
  const files: ModuleFiles = { has: (rel) => byRel.has(rel), pkgDir: () => '', packagesByName: new Map() };
  // Whether `name` exported by `file` is `wanted` defined in `target`, following `export { x } from` and `export *`.
  const isBinding = (file: string | undefined, name: string, target: string, wanted: string, depth = 0): boolean => {
    if (file === target) return name === wanted;
    const source = file === undefined || depth > 3 ? undefined : byRel.get(file);
    if (!source) return false;
    return fileContext(source).index.reExports.some((re) => {
      const original = re.names ? re.names.get(name) : name;
      return original !== undefined && isBinding(resolveSpecifier(files, source.rel, re.module), original, target, wanted, depth + 1);
    });
  };
  return sources.map((source) => ({
    rel: source.rel,
    text: source.text,
    tree: () => source.sf,
    importsOf: (file, name) => {
      const imports = fileContext(source).index.imports;
      return new Set([...imports].filter(([, b]) => isBinding(resolveSpecifier(files, source.rel, b.module), b.imported, file, name)).map(([local]) => local));
    },
    constant: (name) => {
      const index = fileContext(source).index;
      return stringValue(index.consts.get(name), index.consts) ?? (index.imports.has(name) ? name : undefined);
    },
  }));
}
