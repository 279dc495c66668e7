import type { Transport, Trigger } from '../config/schema.js';
import { andList } from './labels.js';

/** How an action is reached: its trigger, and for an HTTP action found as RPC, its transport. */
export interface ReachedBy {
  trigger: Trigger;
  transport?: Transport | undefined;
}

const KINDS: Array<[string, (action: ReachedBy) => boolean]> = [
  ['GraphQL mutations', (a) => a.transport === 'graphql'],
  ['tRPC procedures', (a) => a.transport === 'trpc'],
  ['Server Actions', (a) => a.transport === 'server-action'],
  ['queue consumers', (a) => a.trigger === 'consumer'],
  ['cron jobs', (a) => a.trigger === 'cron'],
];

/**
 * No action is a plain HTTP route or webhook the scaffold would have to serve: each is a GraphQL mutation, a tRPC
 * procedure, a Server Action, a queue consumer or a cron job, all of which call a function, not a route. False for no
 * actions at all (nothing says what the project serves).
 */
export function noHttpRoute(actions: readonly ReachedBy[]): boolean {
  return actions.length > 0 && actions.every((a) => a.transport !== undefined || a.trigger === 'consumer' || a.trigger === 'cron');
}

/** What the actions are, in words: "GraphQL mutations and cron jobs". */
export function httplessKinds(actions: readonly ReachedBy[]): string {
  const kinds = KINDS.filter(([, test]) => actions.some(test)).map(([name]) => name);
  return kinds.length === 0 ? 'functions' : andList(kinds);
}
