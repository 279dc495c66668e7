/**
 * Text heuristics for "this code already deduplicates". Deliberately conservative: a false "dedupes" would make
 * the design credit protection that is not there, which is worse than asking.
 */
const STORE_CHECK = /on\s+conflict|upsert|setnx|['"`]NX['"`]|\bNX\b|\.sadd\(|findUnique|findFirst|findOne\b|exists\(|\.has\(|P2002|23505|ER_DUP_ENTRY|11000|insert\s+into|\.insert\(|\.create\(/i;
const EVENT_ID = /\b(event|evt|notification|payload|body|webhookEvent|stripeEvent)\??\.id\b|\beventId\b|\bevent_id\b|\bpspReference\b|\bwebhook_?id\b/i;
const DEDUPE_WORDS = /idempot|dedup|already\s*processed|alreadyProcessed|processed_?(events|messages|jobs|webhooks)|seen_?(events|messages)|isDuplicate|duplicate/i;

/** Webhook handler text that records or checks the provider's event id before acting. */
export function dedupesEventId(text: string): boolean {
  return DEDUPE_WORDS.test(text) || (EVENT_ID.test(text) && STORE_CHECK.test(text) && /processed|seen|handled|received|events?\b/i.test(text));
}

/** Consumer / job processor text that guards against redelivery. */
export function dedupesMessages(text: string): boolean {
  return DEDUPE_WORDS.test(text) || /on\s+conflict\s*(\([^)]*\))?\s*do\s+nothing|setnx|['"`]NX['"`]|P2002|23505|attribute_not_exists/i.test(text);
}
