import { describe, expect, it } from 'vitest';
import { createIntentKey, isRetryable, keyedAction } from '../../templates/scaffold/typescript/client/intentKey.js';

/** Keys from a counter, so each test says exactly which key each attempt carries. */
const counter = () => {
  let n = 0;
  return () => `key-${++n}`;
};

describe('the client hook\'s intent key (templates/scaffold/typescript/client/intentKey.ts)', () => {
  it('creates the key when the intent first needs it and reuses it until a definitive answer', () => {
    const intent = createIntentKey(counter());
    expect(intent.key()).toBe('key-1');
    // A double click / re-render asks again: same intent, same key.
    expect(intent.key()).toBe('key-1');
    intent.settle(new Response('{}', { status: 201 }));
    expect(intent.key()).toBe('key-2');
  });

  it('keeps the key for answers that ask for a retry (in flight, rate limited, server errors)', () => {
    const intent = createIntentKey(counter());
    const first = intent.key();
    for (const status of [408, 409, 425, 429, 500, 502, 503]) {
      expect(intent.settle(new Response(null, { status }))).toBeInstanceOf(Response);
      expect(intent.key(), `after ${status}`).toBe(first);
    }
  });

  it('ends the intent on a definitive refusal too (the same key would get the same answer)', () => {
    const intent = createIntentKey(counter());
    intent.key();
    intent.settle(new Response(null, { status: 422 }));
    expect(intent.key()).toBe('key-2');
  });

  it('a network error never reaches settle, so the retry carries the same key', async () => {
    const intent = createIntentKey(counter());
    const sent: string[] = [];
    let online = false;
    const send = () => {
      sent.push(intent.key());
      return (online ? Promise.resolve(new Response('{}', { status: 201 })) : Promise.reject(new TypeError('Failed to fetch'))).then(intent.settle);
    };
    await expect(send()).rejects.toThrow('Failed to fetch');
    online = true;
    expect((await send()).status).toBe(201);
    await send();
    expect(sent).toEqual(['key-1', 'key-1', 'key-2']);
  });

  it('fail (axios rejects on an error answer) ends the intent on a definitive status, keeps it on a retryable one or a network error, and rethrows', async () => {
    const intent = createIntentKey(counter());
    const answered = (status: number) => Object.assign(new Error(`status ${status}`), { response: { status } });
    const attempt = (error: unknown) => Promise.reject(error).then(intent.settle, intent.fail);
    intent.key();
    await expect(attempt(answered(503))).rejects.toThrow('status 503');
    await expect(attempt(new Error('ECONNRESET'))).rejects.toThrow('ECONNRESET');
    expect(intent.key()).toBe('key-1');
    await expect(attempt(answered(422))).rejects.toThrow('status 422');
    expect(intent.key()).toBe('key-2');
    // A resolved axios response (2xx by default) is definitive.
    expect(intent.settle({ status: 201, data: {} })).toEqual({ status: 201, data: {} });
    expect(intent.key()).toBe('key-3');
  });

  it('a Server Action result (anything but a Response) ends the intent and passes through unchanged', () => {
    const intent = createIntentKey(counter());
    intent.key();
    const result = { saved: true };
    expect(intent.settle(result)).toBe(result);
    expect(intent.key()).toBe('key-2');
    intent.rotate();
    expect(intent.key()).toBe('key-3');
  });

  it('defaults to random UUID keys', () => {
    const a = createIntentKey();
    const b = createIntentKey();
    expect(a.key()).toMatch(/^[0-9a-f-]{32,36}$/);
    expect(a.key()).not.toBe(b.key());
    expect(isRetryable(200)).toBe(false);
    expect(isRetryable(503)).toBe(true);
  });

  it('keyedAction puts the key first for useActionState, hands the rest on, and settles with the result', async () => {
    const intent = createIntentKey(counter());
    const calls: unknown[][] = [];
    const signIn = async (key: string, state: { error: string }, form: FormData) => {
      calls.push([key, state, form.get('email')]);
      if (calls.length === 1) throw new Error('network');
      return { error: '' };
    };
    const form = new FormData();
    form.append('email', 'a@example.com');
    const action = keyedAction(intent, signIn);
    // A rejected call (a network error) keeps the intent: the retry carries the same key.
    await expect(action({ error: '' }, form)).rejects.toThrow('network');
    expect(await action({ error: 'x' }, form)).toEqual({ error: '' });
    expect(calls).toEqual([
      ['key-1', { error: '' }, 'a@example.com'],
      ['key-1', { error: 'x' }, 'a@example.com'],
    ]);
    expect(intent.key()).toBe('key-2');
  });
});

