import type { StackDesign } from './types.js';
import { DATABASE_LABELS } from './labels.js';

/**
 * The stack in a few words for the terminal and the document's subtitle: what is known by name, and for what was not
 * given or found, the reference the code is generated for ("Fastify; database unknown: PostgreSQL reference"), never
 * "technology-agnostic" for a stack whose framework is known.
 */
export function stackSummary(stack: Pick<StackDesign, 'agnostic' | 'unknownParts' | 'framework' | 'frameworkLabel' | 'databaseLabel' | 'storeDatabase'>): string {
  if (!stack.agnostic) return `${stack.frameworkLabel} on ${stack.databaseLabel}`;
  const unknown = stack.unknownParts ?? [];
  const reference = `${DATABASE_LABELS[stack.storeDatabase]} reference`;
  if (unknown.includes('framework') && unknown.includes('database')) return `technology-agnostic (${reference})`;
  if (unknown.includes('database')) return `${stack.frameworkLabel}, database unknown (${reference})`;
  if (unknown.includes('framework')) return `${stack.databaseLabel}, framework unknown`;
  return `${stack.frameworkLabel} on ${stack.databaseLabel}, language unknown`;
}
