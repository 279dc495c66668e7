import { ts } from 'ts-morph';
import { httpProviderCalls, KEY_HEADERS, keyOptionName, providerCalls, type ProviderCall } from '../providerCalls.js';
import type { Rule, RuleReport } from '../types.js';
import { volatilePart } from '../volatile.js';
import { enclosingLoops, isRetryLoop } from '../walk.js';

/** A key that differs on each attempt deduplicates nothing: the retry is a new request to the provider. */
export const perAttemptProviderKey: Rule = {
  id: 'per-attempt-provider-key',
  severity: 'error',
  title: 'Provider idempotency key changes on every attempt',
  description:
    'The idempotencyKey is built from a random id, the clock or a retry counter, so a retry of the same intent sends a ' +
    'different key and the provider executes it again. The key only protects when every attempt sends the same value.',
  fix: 'Derive the key from something stable for the intent: the client\'s Idempotency-Key, the order or event id (e.g. `refund:${orderId}`), never randomUUID()/Date.now() or the attempt number.',
  docsAnchor: 'finding-per-attempt-provider-key',
  mentions: /idempotencyKey|paypalRequestId|payPalRequestId|Idempotency-Key|PayPal-Request-Id/i,
  checkFile(ctx) {
    const out: RuleReport[] = [];
    // Raw HTTP: the header's value as the call sends it (a headers literal, `headers.set(…)`), read by the inspector.
    for (const c of httpProviderCalls(ctx)) {
      const volatile = c.keyPerAttempt && c.key ? volatilePart(c.key) : undefined;
      if (volatile) out.push({ node: c.key!, message: `${c.provider} ${c.operation} sends the ${KEY_HEADERS[c.provider] ?? 'idempotency'} header from \`${volatile.getText()}\`, which is new on every attempt.` });
    }
    for (const c of providerCalls(ctx)) {
      const perAttempt = perAttemptKey(c);
      if (!perAttempt) continue;
      out.push({
        node: perAttempt.key,
        message: perAttempt.volatile
          ? `${c.provider} ${c.operation} gets a key (${keyOptionName(c.provider)}) from \`${perAttempt.volatile.getText()}\`, which is new on every attempt.`
          : `${c.provider} ${c.operation} is retried in a loop with a key that includes the attempt counter \`${perAttempt.counter}\`.`,
      });
    }
    return out;
  },
};

/**
 * Why a provider call's key is new on every attempt: a clock or random part (`volatile`), or the counter of an
 * enclosing retry loop. The rule reports it; apply's stable-params transform replaces such a key with the derived one.
 */
export function perAttemptKey(c: Pick<ProviderCall, 'call' | 'key'>): { key: ts.Expression; volatile?: ts.Node; counter?: string } | undefined {
  if (!c.key) return undefined;
  const volatile = volatilePart(c.key);
  if (volatile) return { key: c.key, volatile };
  const counter = retryCounter(c.call, c.key);
  return counter ? { key: c.key, counter } : undefined;
}

/** The counter variable of an enclosing retry loop that the key expression mentions. */
export function retryCounter(call: ts.Node, key: ts.Expression): string | undefined {
  for (const loop of enclosingLoops(call)) {
    if (!isRetryLoop(loop) || !ts.isForStatement(loop) || !loop.initializer || !ts.isVariableDeclarationList(loop.initializer)) continue;
    for (const decl of loop.initializer.declarations) {
      if (ts.isIdentifier(decl.name) && new RegExp(`\\b${decl.name.text}\\b`).test(key.getText())) return decl.name.text;
    }
  }
  return undefined;
}
