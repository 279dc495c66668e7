import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types: the generator the tables come from
import { extractOperations, installedVersion, SDKS } from '../../scripts/generate-provider-tables.mjs';
import { providerTables } from '../../src/inspect/providers/index.js';

interface Extracted { resource: string[]; method: string; verb: string; risk: string }

/** The checked-in tables must cover every operation the installed SDKs expose: a new SDK method fails here. */
describe('provider operation tables', () => {
  for (const table of providerTables) {
    it(`${table.provider} table covers ${table.sdk} as installed`, () => {
      const sdk = (SDKS as Record<string, { module: string }>)[table.provider];
      expect(sdk?.module).toBe(table.sdk);
      const known = new Set(table.operations.map(([resource, method]) => `${resource}#${method}`));
      const installed = (extractOperations(table.provider) as Extracted[]).map((op) => `${op.resource.join('.')}#${op.method}`);
      expect(installed.length).toBeGreaterThan(10);
      const missing = installed.filter((key) => !known.has(key));
      expect(missing, `regenerate with node scripts/generate-provider-tables.mjs (installed ${String(installedVersion(table.sdk))}, table ${table.version})`).toEqual([]);
    });
  }

  it('classifies the operations a reviewer cares about', () => {
    const risk = (provider: string, resource: string, method: string) =>
      providerTables.find((t) => t.provider === provider)?.operations.find(([r, m]) => r === resource && m === method)?.[3];
    expect(risk('stripe', 'paymentIntents', 'create')).toBe('moves-money');
    expect(risk('stripe', 'refunds', 'create')).toBe('moves-money');
    expect(risk('stripe', 'customers', 'update')).toBe('billable-object');
    expect(risk('stripe', 'billingPortal.sessions', 'create')).toBe('harmless-object');
    expect(risk('stripe', 'customers', 'retrieve')).toBe('read');
    expect(risk('adyen', 'checkout.ModificationsApi', 'updateAuthorisedAmount')).toBe('moves-money');
    expect(risk('adyen', 'checkout.PaymentsApi', 'paymentsDetails')).toBe('moves-money');
    expect(risk('paypal', 'paymentsController', 'refundCapturedPayment')).toBe('moves-money');
    expect(risk('braintree', 'transaction', 'sale')).toBe('moves-money');
    expect(risk('square', 'payments', 'create')).toBe('moves-money');
    expect(risk('mollie', 'payments', 'create')).toBe('moves-money');
    expect(risk('paddle', 'transactions', 'create')).toBe('moves-money');
  });
});
