/**
 * How a derived key joins a call. In a protected handler the context is always there, so the key goes in as is. In a
 * service the claim was threaded into, the context is an optional parameter (`guard`): the key goes in only when it
 * is set, and a call made without one sends exactly what it sent before.
 */
export type KeyPlacement = (key: string, guard?: string) => void;

/** A value the SDK skips when undefined (an argument, Adyen's idempotencyKey, PayPal's paypalRequestId). */
export const guarded = (value: string, guard?: string): string => (guard === undefined ? value : `${guard} ? ${value} : undefined`);

/** A property, or with a guard a spread that adds it only then: for objects whose undefined values would be sent (fetch headers). */
export const guardedProperty = (property: string, guard?: string): string => (guard === undefined ? property : `...(${guard} ? { ${property} } : {})`);
