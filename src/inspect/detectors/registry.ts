import { consumers } from './consumers.js';
import { crons } from './crons.js';
import type { Detector } from './detectorTypes.js';
import { existingIdempotency } from './existingIdempotency.js';
import { httpRoutes } from './httpRoutes.js';
import { nestRoutes } from './nestRoutes.js';
import { nextRoutes } from './nextRoutes.js';
import { payments } from './payments.js';
import { recordInserts } from './recordInserts.js';
import { rpcEndpoints } from './rpcEndpoints.js';
import { webhooks } from './webhooks.js';

/** Adding a detector is one file plus one line here. Order does not matter: detectors only append facts. */
export const detectors: Detector[] = [httpRoutes, nestRoutes, nextRoutes, rpcEndpoints, payments, webhooks, consumers, crons, existingIdempotency, recordInserts];

/** Any detector interested in this text? Files that interest none are never parsed. */
export const anyDetectorMention = new RegExp(detectors.map((d) => `(?:${d.mentions.source})`).join('|'), 'i');
