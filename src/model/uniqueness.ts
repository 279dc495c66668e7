import type { UniquenessAssessment } from './types.js';

/**
 * Birthday bound: the probability that any two of n uniformly random b-bit keys collide,
 * 1 - exp(-n(n-1) / 2^(b+1)), computed with expm1 so tiny probabilities do not round to zero.
 */
export function collisionProbability(n: number, bits: number): number {
  if (n < 2) return 0;
  return -Math.expm1(-(n * (n - 1)) / 2 ** (bits + 1));
}

export function formatProbability(p: number): string {
  if (p === 0) return '0';
  if (p >= 0.01) return `${(p * 100).toFixed(p >= 0.1 ? 0 : 1)}%`;
  const exponent = Math.floor(Math.log10(p));
  const mantissa = p / 10 ** exponent;
  return `${mantissa.toFixed(1)} × 10^${exponent}`;
}

export function assessUniqueness(input: {
  bits: number;
  keysInWindow: number;
  standardFormat?: string;
  variableParts: string;
}): UniquenessAssessment {
  const p = collisionProbability(input.keysInWindow, input.bits);
  const verdict = p < 1e-9 ? 'negligible' : p < 1e-6 ? 'acceptable' : 'too-small';
  const volume = input.keysInWindow.toLocaleString('en-US');
  let explanation: string;
  if (input.standardFormat) {
    explanation = `${input.standardFormat} carries ${input.bits} random bits; with ${volume} live keys in the retention window the chance of any collision is ${formatProbability(p)}, negligible at any practical scale.`;
  } else if (verdict === 'too-small') {
    explanation = `The variable part (${input.variableParts}) gives about ${input.bits} bits. With ${volume} live keys in the retention window the birthday bound puts the chance of a collision at ${formatProbability(p)}: too high, because a collision silently replays another request's response. Widen the key (hash the full intent with SHA-256) or shorten retention.`;
  } else {
    explanation = `The variable part (${input.variableParts}) gives about ${input.bits} bits. With ${volume} live keys in the retention window the birthday bound puts the chance of any collision at ${formatProbability(p)}, which is ${verdict}. The bound assumes the inputs identify exactly one intent; if two genuine intents can share them, add the distinguishing field.`;
  }
  return { bits: input.bits, keysInWindow: input.keysInWindow, collisionProbability: p, verdict, explanation };
}
