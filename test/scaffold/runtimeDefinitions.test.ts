import { describe, expect, it } from 'vitest';
import { KEY_PATTERN } from '../../src/model/policies.js';
import { PAYPAL_NAMESPACE, providerKeyBase as documentedKey, uuidV5 } from '../../src/model/providers.js';
import { parseIdempotencyKey, providerKeyBase } from '../../templates/scaffold/typescript/core/keys.js';
import { modelFor } from './generateInto.js';

/** The document and the generated code must state one key grammar and one provider key formula. */
describe('definitions shared by the document and the generated runtime', () => {
  it('provider keys: the document formula is the runtime function, scoped per principal, within every provider limit', async () => {
    const claim = { scope: 'user-42', key: '0f8fad5b-d9cb-469f-a165-70867728950e', action: 'createPayment' };
    expect(providerKeyBase(claim, 1)).toBe(documentedKey(claim.scope, claim.key, claim.action, 1));
    expect(providerKeyBase({ ...claim, scope: 'user-43' }, 1)).not.toBe(providerKeyBase(claim, 1));
    expect(providerKeyBase(claim, 2)).not.toBe(providerKeyBase(claim, 1));
    const longKey = { ...claim, key: 'k'.repeat(255) };
    expect(providerKeyBase(longKey).length).toBe(64); // Stripe ≤ 255, Adyen ≤ 64
    expect(uuidV5(providerKeyBase(claim), PAYPAL_NAMESPACE)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    const model = await modelFor('express-stripe-payments');
    const stripe = model.providers.find((provider) => provider.id === 'stripe')!;
    const action = model.actions.find((candidate) => candidate.name === stripe.actions[0])!;
    expect(stripe.example).toBe(providerKeyBase({ scope: action.scope === 'global' ? 'global' : 'user-42', key: action.key.example, action: action.codeName }, 0));
    expect(stripe.derivation).toContain('[principal scope, local key, action, step]');
  });

  it('key grammar: the pattern the document prints is the one the runtime applies', async () => {
    const model = await modelFor('express-stripe-payments');
    expect(model.keys.charsetPattern).toBe(KEY_PATTERN);
    const parse = (header: string | string[] | undefined) => parseIdempotencyKey(header, model.keys.maxLength, model.keys.charsetPattern);
    expect(parse('a1B2-c3_d4.e5~!#$%&\'()*+/:;<=>?@[]^`{|}')).toEqual({ ok: true, key: 'a1B2-c3_d4.e5~!#$%&\'()*+/:;<=>?@[]^`{|}' });
    expect(parse('"quoted-key"')).toEqual({ ok: true, key: 'quoted-key' });
    expect(parse('x'.repeat(255))).toMatchObject({ ok: true });
    for (const bad of ['', '""', 'x'.repeat(256), 'a, b', 'a,b', 'a b', ' a', 'tab\tkey', 'caf\u00e9', 'un"quoted', '"un"quoted"', 'line\nbreak', '\u007f'])
      expect(parse(bad).ok, JSON.stringify(bad)).toBe(false);
    expect(parse(['one', 'two'])).toEqual({ ok: false, problem: 'invalid' });
    expect(parse(['one'])).toEqual({ ok: true, key: 'one' });
    expect(parse(undefined)).toEqual({ ok: false, problem: 'missing' });
  });

  it('runtime mode: lease where the action reaches a provider or runs saga steps, transactional otherwise, config wins', async () => {
    const model = await modelFor('express-stripe-payments', (raw) => {
      const actions = raw.actions as Array<Record<string, unknown>>;
      actions.push({ name: 'renameAccount', trigger: 'http', route: 'POST /accounts/:id/name', significantFields: ['id', 'name'] });
      actions.push({ name: 'sendReceipt', trigger: 'http', route: 'POST /receipts', significantFields: ['orderId'], mode: 'lease' });
    });
    const modes = Object.fromEntries(model.actions.map((action) => [action.name, action.mode]));
    expect(modes).toMatchObject({ createPayment: 'lease', refundPayment: 'lease', renameAccount: 'transactional', sendReceipt: 'lease' });
    expect(model.actions.find((action) => action.name === 'renameAccount')!.modeReason).toMatch(/^Transactional/);
  });

  it('store cost: the document states the round trips runtimeHotPaths.test.ts measures on the wire', async () => {
    const model = await modelFor('express-stripe-payments');
    const text = model.detection.justification;
    expect(text).toMatch(/recognised in one round trip/);
    expect(text).toMatch(/takes no lock, writes nothing and commits nothing/);
    expect(text).toMatch(/In lease mode that round trip is the claim itself: one INSERT … ON CONFLICT statement in autocommit, which reads the record first/);
    expect(text).toMatch(/with no read before it/);
    expect(text).toMatch(/BEGIN and the claim, after which the action's writes and the completion share a single COMMIT/);
    // runtimeHotPaths.test.ts records what the generated store sends to PostgreSQL and asserts these same counts:
    // replay 1 round trip in both modes (lease: the claim statement, with the row neither locked nor written);
    // lease first request the claim (+ completion); transactional read, BEGIN with the claim, handler, completion
    // with one COMMIT.
    expect(text).not.toMatch(/three such round trips|SET LOCAL/);
  });
});
