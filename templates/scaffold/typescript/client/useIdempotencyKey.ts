import { useRef } from 'react';
import { createIntentKey } from './intentKey.js';
import type { IntentKey } from './intentKey.js';

export { createIntentKey, isRetryable, keyedAction } from './intentKey.js';
export type { IntentKey } from './intentKey.js';

/**
 * The component's idempotency key for one kind of intent, stable across re-renders: send `intent.key()` with the
 * request (the Idempotency-Key header, or a Server Action's first argument) and pass the answer to `intent.settle`
 * (and a rejection that carries one, as axios makes, to `intent.fail`).
 */
export function useIdempotencyKey(): IntentKey {
  const ref = useRef<IntentKey | null>(null);
  if (ref.current === null) ref.current = createIntentKey();
  return ref.current;
}
