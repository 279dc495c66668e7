import path from 'node:path';
import { ROOT } from './generateInto.js';
import { installIntoCache } from './npmCache.js';

/**
 * graphql-yoga and graphql, for the tests of apply on a GraphQL server without a web framework. Not this
 * repository's dependencies: they go into a cache inside it, which a fixture's node_modules links to.
 */
export const GRAPHQL_YOGA_CACHE = path.join(ROOT, '.tmp', 'npm-graphql-yoga');

const PACKAGES = { 'graphql-yoga': '5.24.1', graphql: '16.15.0' };

/** Installs them once; a skip reason when npm cannot (never under CI with a reachable registry). */
export function installGraphqlYoga(): Promise<string | undefined> {
  return installIntoCache(GRAPHQL_YOGA_CACHE, PACKAGES);
}
