import type { ts } from 'ts-morph';
import { perAttemptClaimAt } from '../../findings/conflictKey.js';
import { parseSource } from '../parse/parseSource.js';
import type { PerAttemptClaim } from '../types.js';

/**
 * "Already deduplicates" only on evidence: a store lookup or an atomic claim keyed by the event / message id, or a
 * call to a dedupe helper given that id. Words in comments or log lines prove nothing: a false "dedupes" hides the
 * biggest risk in a webhook or consumer, which is worse than asking.
 */
export interface DedupeEvidence {
  file: string;
  /** 1-based. */
  line: number;
  detail: string;
}

/** What the search found: evidence, or else the claim it refused to count (if any). */
export interface DedupeScan {
  evidence?: DedupeEvidence;
  perAttemptClaim?: PerAttemptClaim;
}

/** A piece of source to search: a function body (or a whole handler) with the line its text starts on. */
export interface SourcePiece {
  file: string;
  text: string;
  line: number;
}

/** The provider's event id itself: a business key (`checkoutSession.id` as an idempotency key) protects one branch, not the webhook. */
const EVENT_ID = /\b(?:event|evt|notification|webhookEvent|stripeEvent|body|payload|hook)\??\.id\b|\b(?:event|webhook|notification)_?[iI]d\b|\bpspReference\b/;
const MESSAGE_ID = /\b(?:job|message|msg|event|record|payload|data|task|envelope)\??\.(?:id|key|messageId|MessageId|offset|properties\??\.messageId)\b|\b(?:message|job|event|dedupe?|idempotency)_?[iI]d\b|\bmessageId\b|\bidempotency_?[kK]ey\b/;

/** Reads that check whether the id was seen. */
const LOOKUP = /\.(?:findUnique|findUniqueOrThrow|findFirst|findOne|findOneBy|findById|exists|sismember|sIsMember|hexists|hExists|get|has|count)\s*\(|\bselect\b[\s\S]{0,80}\bwhere\b/i;
/** Writes that claim the id atomically. */
const CLAIM = /\b(?:setnx|setNX|sadd|sAdd|hsetnx|hSetNX)\s*\(|['"`]NX['"`]|\bNX\s*:\s*true|on\s+conflict[\s\S]{0,60}do\s+nothing|insert\s+ignore|on\s+duplicate\s+key|attribute_not_exists|\.upsert\s*\(|onConflictDoNothing|orIgnore\s*\(/i;
/** A helper whose name says it deduplicates, called with the id. */
const HELPER = /\b(?:isDuplicate|alreadyProcessed|wasProcessed|hasProcessed|isProcessed|markProcessed|markAsProcessed|dedupe\w*|claim\w*|recordEvent\w*|seen\w*|checkIdempot\w*|ensureIdempot\w*|withIdempot\w*)\s*\(/;
/** Unique-violation handling next to an insert keyed by the id is a claim too. */
const UNIQUE_VIOLATION = /P2002|23505|ER_DUP_ENTRY|11000|SQLITE_CONSTRAINT|UniqueConstraint/;
const INSERT = /\.(?:create|insert|insertOne|put|add)\s*\(|\binsert\s+into\b/i;

function find(pieces: readonly SourcePiece[], id: RegExp): DedupeScan {
  let refused: PerAttemptClaim | undefined;
  for (const piece of pieces) {
    const lines = piece.text.split('\n');
    const violation = UNIQUE_VIOLATION.test(piece.text);
    let sf: ts.SourceFile | undefined;
    let offset = 0;
    for (let i = 0; i < lines.length; offset += (lines[i] ?? '').length + 1, i++) {
      const line = lines[i] ?? '';
      if (/^\s*(\/\/|\*|\/\*)/.test(line) || /\b(console|log(ger)?)\.\w+\(/.test(line)) continue;
      // A call spans a few lines: the id may sit in the arguments around the line that names the operation.
      const window = lines.slice(Math.max(0, i - 3), i + 4).join('\n');
      const at = { file: piece.file, line: piece.line + i };
      const keyed = id.test(window);
      if (!keyed) continue;
      const claim = CLAIM.exec(line) ?? (violation ? INSERT.exec(line) : null);
      if (claim) {
        // The id near the claim proves nothing when the claim's own key is made fresh on each attempt.
        sf ??= parseSource(piece.file, piece.text).sf;
        const fresh = perAttemptClaimAt(sf, offset + claim.index + Math.max(0, claim[0].search(/\w/)), { unique: !CLAIM.test(line) });
        if (fresh) {
          refused ??= { ...at, claim: fresh.claim, value: fresh.value };
          continue;
        }
      }
      if (CLAIM.test(line)) return { evidence: { ...at, detail: `atomic claim keyed by the id: ${snippet(line)}` } };
      if (LOOKUP.test(line) && !/headers?|req\.get|request\.get|process\.env|params\.get|searchParams/i.test(line)) return { evidence: { ...at, detail: `store lookup keyed by the id: ${snippet(line)}` } };
      if (HELPER.test(line)) return { evidence: { ...at, detail: `dedupe helper called with the id: ${snippet(line)}` } };
      if (violation && INSERT.test(line)) return { evidence: { ...at, detail: `insert keyed by the id, unique violation treated as a duplicate: ${snippet(line)}` } };
    }
  }
  return refused ? { perAttemptClaim: refused } : {};
}

function snippet(line: string): string {
  const text = line.trim().replace(/\s+/g, ' ');
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}

/** Webhook handler code that records or checks the provider's event id before acting. */
export function eventIdDedupe(pieces: readonly SourcePiece[]): DedupeScan {
  return find(pieces, EVENT_ID);
}

/** Consumer / job processor code that guards against redelivery of the same message. */
export function messageDedupe(pieces: readonly SourcePiece[]): DedupeScan {
  return find(pieces, MESSAGE_ID);
}

/** The message identity a handler uses, when it reads one (`job.id`, `message.key`, `event.id`). */
export function messageIdentity(text: string): string | undefined {
  const m = /\b(job|message|msg|event|record|payload|task|envelope|data)\??\.(id|key|messageId|MessageId|properties\??\.messageId|opts\??\.jobId)\b/.exec(text);
  return m ? m[0].replace(/\?\./g, '.') : undefined;
}
