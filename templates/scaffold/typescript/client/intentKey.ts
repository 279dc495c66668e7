/**
 * One idempotency key per user intent (a checkout, a form submission), written by `idempotency-builder apply`:
 * created when the intent first needs it, reused by every retry of that intent (a double click, a retry after a
 * network error or a 5xx), and replaced only once the server has given a definitive answer. No React here, so the
 * logic is testable on its own; useIdempotencyKey.ts keeps one per component.
 */
export interface IntentKey {
  /** The current intent's key, created on first use. */
  key(): string;
  /**
   * Pass the outcome through (`fetch(...).then(intent.settle)`): a Response ends the intent unless it asks for a
   * retry (408, 409 in progress, 425, 429, 5xx); any other value (a Server Action's result) ends it. A rejected
   * call never reaches settle, so a network error keeps the key for the retry.
   */
  settle<T>(outcome: T): T;
  /**
   * For clients that reject on an HTTP error answer (axios: `.then(intent.settle, intent.fail)`): an error carrying
   * the answer's status (`error.response.status`) ends the intent unless that status asks for a retry; one without
   * (a network error, a time-out) keeps the key. The error is thrown on either way.
   */
  fail(error: unknown): never;
  /** Starts a new intent now (the user changed the form, or abandoned it). */
  rotate(): void;
}

/** Answers that say "try again with the same key": the request may not have run, or is still running. */
export function isRetryable(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}

/**
 * randomUUID needs a secure context (https, localhost); 16 random bytes in hex serve elsewhere. Read by shape: the
 * DOM typings of older TypeScript releases do not declare randomUUID.
 */
const randomKey = (): string => {
  const webCrypto = globalThis.crypto as Crypto & { randomUUID?: () => string };
  if (typeof webCrypto.randomUUID === 'function') return webCrypto.randomUUID();
  const bytes = webCrypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
};

export function createIntentKey(generate: () => string = randomKey): IntentKey {
  let current: string | undefined;
  const rotate = () => {
    current = undefined;
  };
  return {
    key: () => {
      if (current === undefined) current = generate();
      return current;
    },
    settle: <T>(outcome: T): T => {
      const status = outcome instanceof Response ? outcome.status : undefined;
      if (status === undefined || !isRetryable(status)) rotate();
      return outcome;
    },
    fail: (error: unknown): never => {
      const status = answeredStatus(error);
      if (status !== undefined && !isRetryable(status)) rotate();
      throw error;
    },
    rotate,
  };
}

/** The HTTP status an error reports the server answered with (`error.response.status`, as axios puts it). */
function answeredStatus(error: unknown): number | undefined {
  const response =
    typeof error === 'object' && error !== null ? (error as { response?: unknown }).response : undefined;
  const status =
    typeof response === 'object' && response !== null ? (response as { status?: unknown }).status : undefined;
  return typeof status === 'number' ? status : undefined;
}

/**
 * The Server Action with the intent's key put first, for code that calls it for you: in
 * `useActionState(keyedAction(intent, signIn), initial)` React's previous state and FormData follow the key, and the
 * intent is settled with the result.
 */
export function keyedAction<A extends unknown[], T>(
  intent: IntentKey,
  action: (key: string, ...args: A) => Promise<T>,
): (...args: A) => Promise<T> {
  return async (...args: A) => intent.settle(await action(intent.key(), ...args));
}
