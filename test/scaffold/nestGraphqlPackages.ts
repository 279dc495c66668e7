import path from 'node:path';
import { ROOT } from './generateInto.js';
import { installIntoCache } from './npmCache.js';

/**
 * @nestjs/graphql with the Apollo driver on Nest 11's Express platform, for the tests of GraphQL resolvers. They are
 * not this repository's dependencies: they go into a cache inside it without their peers, so they share its
 * @nestjs/common, @nestjs/core, express and reflect-metadata, as one app's node_modules would.
 */
export const NEST_GRAPHQL_CACHE = path.join(ROOT, '.tmp', 'npm-nestjs-graphql');

const PACKAGES = {
  '@nestjs/graphql': '13.4.5',
  '@nestjs/apollo': '13.4.5',
  '@apollo/server': '5.5.1',
  '@as-integrations/express5': '1.1.2',
  graphql: '16.15.0',
};

/** Installs them once; a skip reason when npm cannot (never under CI with a reachable registry). */
export function installNestGraphql(): Promise<string | undefined> {
  return installIntoCache(NEST_GRAPHQL_CACHE, PACKAGES, {}, { peersFromParent: true });
}
