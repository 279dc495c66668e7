import { BROKERS, DATABASES, FRAMEWORKS, LANGUAGES, TEST_FRAMEWORKS } from '../config/schema.js';
import type { Inspection } from '../inspect/types.js';
import type { StackAnswer } from './types.js';

/** Which detected database to design for when several are present: a cache (Redis) is rarely the system of record. */
const DATABASE_PREFERENCE = ['postgres', 'mysql', 'mariadb', 'sqlite', 'mongodb', 'dynamodb', 'redis'] as const;
/** Inspector names outside the config enums, mapped to the closest design. */
const BROKER_ALIASES: Record<string, StackAnswer['broker']> = {};

export type StackDraft = { [K in keyof StackAnswer]: StackAnswer[K] | undefined };

/** Stack facts mapped onto the config's enums; a part the code does not settle stays undefined. */
export function stackFromInspection(inspection: Inspection): StackDraft {
  const facts = inspection.stack;
  const language = facts.language !== 'unknown' ? LANGUAGES.find((l) => l === facts.language) : undefined;
  const frameworks = facts.frameworks.flatMap((f) => FRAMEWORKS.filter((known) => known === f));
  const kinds = new Set(inspection.findings.map((f) => f.kind));
  // A worker with consumers or jobs and no HTTP framework is a real, known stack: framework "none".
  const headless = frameworks.length === 0 && !kinds.has('endpoint') && (kinds.has('consumer') || kinds.has('cron'));
  const database = DATABASE_PREFERENCE.find((d) => facts.databases.includes(d));
  const brokerName = facts.brokers[0];
  const broker = brokerName === undefined ? (language ? 'none' : undefined) : (BROKERS.find((b) => b === brokerName) ?? BROKER_ALIASES[brokerName] ?? 'unknown');
  const testFramework = TEST_FRAMEWORKS.find((t) => t === facts.testFramework && t !== 'unknown');
  return {
    language,
    framework: frameworks.length === 1 ? frameworks[0] : headless ? 'none' : undefined,
    database: DATABASES.find((d) => d === database),
    broker,
    testFramework,
  };
}

/** Several frameworks detected (e.g. a Next.js front with an Express API): the user picks, the list narrows the choice. */
export function detectedFrameworks(inspection: Inspection): StackAnswer['framework'][] {
  return inspection.stack.frameworks.flatMap((f) => FRAMEWORKS.filter((known) => known === f));
}
