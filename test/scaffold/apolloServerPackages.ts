import path from 'node:path';
import { ROOT } from './generateInto.js';
import { installIntoCache } from './npmCache.js';

/**
 * Apollo Server 5 (its standalone server) and graphql, for the tests of apply on a GraphQL server without a web
 * framework. Not this repository's dependencies: they go into a cache inside it, which a fixture's node_modules links to.
 */
export const APOLLO_SERVER_CACHE = path.join(ROOT, '.tmp', 'npm-apollo-server');

const PACKAGES = { '@apollo/server': '5.5.1', graphql: '16.15.0' };

/** Installs them once; a skip reason when npm cannot (never under CI with a reachable registry). */
export function installApolloServer(): Promise<string | undefined> {
  return installIntoCache(APOLLO_SERVER_CACHE, PACKAGES);
}
