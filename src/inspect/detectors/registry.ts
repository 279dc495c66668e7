import { consumers } from './consumers.js';
import { crons } from './crons.js';
import { dbConnection } from './dbConnection.js';
import type { Detector } from './detectorTypes.js';
import { existingIdempotency } from './existingIdempotency.js';
import { graphqlMutations } from './graphqlMutations.js';
import { httpRoutes } from './httpRoutes.js';
import { nestRoutes } from './nestRoutes.js';
import { nextRoutes } from './nextRoutes.js';
import { payments } from './payments.js';
import { recordInserts } from './recordInserts.js';
import { routingControllers } from './routingControllers.js';
import { rpcEndpoints } from './rpcEndpoints.js';
import { webhooks } from './webhooks.js';

/** Adding a detector is one file plus one line here. Order does not matter: detectors only append facts. */
export const detectors: Detector[] = [httpRoutes, nestRoutes, nextRoutes, routingControllers, rpcEndpoints, graphqlMutations, payments, webhooks, consumers, crons, existingIdempotency, recordInserts, dbConnection];

/** Does the detector look at this file (path and text)? */
export function wants(detector: Detector, rel: string, text: string): boolean {
  return (!detector.paths || detector.paths.test(rel)) && detector.mentions.test(text);
}

/** Any detector without a path test interested in this text? One regular expression for all of them. */
const anyMention = new RegExp(detectors.filter((d) => !d.paths).map((d) => `(?:${d.mentions.source})`).join('|'), 'i');
const pathBound = detectors.flatMap((d) => (d.paths ? [{ paths: d.paths, mentions: new RegExp(d.mentions.source, 'i') }] : []));

/** Any detector interested in this file? Files that interest none are never parsed. */
export function anyDetectorWants(rel: string, text: string): boolean {
  return anyMention.test(text) || pathBound.some((d) => d.paths.test(rel) && d.mentions.test(text));
}
