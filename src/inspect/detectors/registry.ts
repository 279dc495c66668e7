import { consumers } from './consumers.js';
import { crons } from './crons.js';
import { dbConnection } from './dbConnection.js';
import type { Detector } from './detectorTypes.js';
import { existingIdempotency } from './existingIdempotency.js';
import { factorUnion } from './factorUnion.js';
import { graphqlMutations } from './graphqlMutations.js';
import { messages } from './messages.js';
import { httpRoutes } from './httpRoutes.js';
import { nestRoutes } from './nestRoutes.js';
import { nextRoutes } from './nextRoutes.js';
import { payments } from './payments.js';
import { publishes } from './publishes.js';
import { recordInserts } from './recordInserts.js';
import { routingControllers } from './routingControllers.js';
import { rpcEndpoints } from './rpcEndpoints.js';
import { viewRenders } from './viewRenders.js';
import { webhooks } from './webhooks.js';

/** Adding a detector is one file plus one line here. Order does not matter: detectors only append facts. */
export const detectors: Detector[] = [httpRoutes, nestRoutes, nextRoutes, routingControllers, rpcEndpoints, graphqlMutations, payments, webhooks, consumers, crons, existingIdempotency, recordInserts, messages, publishes, dbConnection, viewRenders];

/** Does the detector look at this file (path and text)? */
export function wants(detector: Detector, rel: string, text: string): boolean {
  return (!detector.paths || detector.paths.test(rel)) && detector.mentions.test(text);
}

/**
 * The detectors for one file, in registry order, and whether any of them mentions it ignoring case. A file no
 * detector mentions is parsed only when it matters across files; a mentioned one is parsed even when no detector then
 * wants it under its own flags (its functions and shapes serve other files). The same answers as `wants` for each detector and a case-insensitive test of each mention, from one scan of the
 * text for all of them instead of one per detector: V8 tries an alternation of words at each position about as fast
 * as one word, and most files mention nothing (these tests cost a third of a bare parse, one by one).
 */
export function detectorsFor(rel: string, text: string): { mentioned: boolean; wanted: Detector[] } {
  let eligible = 0;
  detectors.forEach((d, i) => {
    if (!d.paths || d.paths.test(rel)) eligible |= 1 << i;
  });
  const mentioned = mentionedIgnoringCase(eligible, text);
  if (mentioned === 0) return { mentioned: false, wanted: [] };
  // A detector whose own flags are exactly `i` is answered by the scan; any other is tested once more on its own.
  const wanted = detectors.filter((d, i) => (mentioned & (1 << i)) !== 0 && (d.mentions.flags === 'i' || d.mentions.test(text)));
  return { mentioned: true, wanted };
}

// A bit per detector in one number.
if (detectors.length > 31) throw new Error('detectorsFor keeps a bit per detector: at most 31 detectors');

/**
 * Detectors the union can take: a source with back references or named groups of its
 * own would change meaning once numbered among the others' groups, so such a one is tested on its own.
 */
const UNIONABLE = detectors.reduce((set, d, i) => (!/\\[1-9]|\\k<|\(\?<(?![=!])/.test(d.mentions.source) ? set | (1 << i) : set), 0);

/** Union expressions by set of detectors still unanswered (a bit per detector), built on first use. */
const unions = new Map<number, { re: RegExp; owners: Array<[number, number]> }>();

function unionOf(set: number): { re: RegExp; owners: Array<[number, number]> } {
  let union = unions.get(set);
  if (!union) {
    const { source, owners } = factorUnion(detectors.flatMap((d, i) => ((set & (1 << i)) !== 0 ? [{ owner: i, source: d.mentions.source }] : [])));
    union = { re: new RegExp(source, 'gi'), owners };
    unions.set(set, union);
  }
  return union;
}

/**
 * Which of the `set` detectors' mentions occur in `text`, case-insensitively. The union finds the leftmost position
 * where any unanswered one matches and tells one alternative matching there; that one's detector is answered and the
 * scan resumes at the same position without it, so a mention matching at the same place or later is still found.
 */
function mentionedIgnoringCase(set: number, text: string): number {
  return scanUnion(set & UNIONABLE, text) | testEach(set & ~UNIONABLE, text);
}

function scanUnion(set: number, text: string): number {
  let open = set;
  let found = 0;
  let from = 0;
  while (open !== 0) {
    const { re, owners } = unionOf(open);
    re.lastIndex = from;
    const match = re.exec(text);
    if (!match) break;
    const owner = owners.find(([group]) => match[group] !== undefined)?.[1];
    const bit = owner === undefined ? 0 : 1 << owner;
    // Cannot happen (a match of the union is a match of one alternative); if it did, test what is left one by one.
    if (bit === 0 || (open & bit) === 0) return found | testEach(open, text);
    found |= bit;
    open &= ~bit;
    from = match.index;
  }
  return found;
}

function testEach(set: number, text: string): number {
  let found = 0;
  detectors.forEach((d, i) => {
    if ((set & (1 << i)) !== 0 && new RegExp(d.mentions.source, 'i').test(text)) found |= 1 << i;
  });
  return found;
}
