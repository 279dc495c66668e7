import type { PerAttemptClaim } from '../inspect/types.js';

/**
 * Why a claim next to the id did not count, as a sentence to append to a finding's message: " The ON CONFLICT at
 * src/worker.ts:12 is keyed on `randomUUID()`, made fresh per delivery, so a redelivery inserts again." Empty when
 * there is no such claim. The value is a call name the matcher recognised, so it never holds a backtick.
 */
export function freshClaim(claim: PerAttemptClaim | undefined): string {
  if (!claim) return '';
  return ` The ${claim.claim} at ${claim.file}:${claim.line} is keyed on \`${claim.value}\`, made fresh per delivery, so a redelivery inserts again.`;
}
