import { describe, expect, it } from 'vitest';
import type { ActionCodeFacts } from '../../src/model/codeFacts.js';
import { buildDesign } from '../../src/model/index.js';
import { NOW, loadFixture } from '../helpers/fixtures.js';

const facts = (over: Partial<ActionCodeFacts>): ActionCodeFacts => ({
  action: 'createBooking',
  handler: { file: 'src/routes/bookings.ts', line: 12, name: 'createBooking' },
  calls: [],
  writes: [],
  budgets: [],
  ...over,
});
const modeOf = (code: ActionCodeFacts[] | undefined, mode?: 'lease' | 'transactional') => {
  const config = loadFixture('minimal-one-action');
  const configured = mode ? { ...config, actions: config.actions.map((a) => ({ ...a, mode })) } : config;
  return buildDesign(configured, undefined, { now: NOW, ...(code ? { code } : {}) }).actions[0]!;
};
const ORM_INSERT = { target: 'booking', kind: 'create' as const, file: 'src/routes/bookings.ts', line: 14 };

describe('the runtime mode follows where the handler writes', () => {
  it('an action known only from its configuration is transactional: its writes are taken to go through context.db', () => {
    expect(modeOf(undefined).mode).toBe('transactional');
  });

  it("a handler that writes through the project's own connection runs in lease mode, and the reason names the write", () => {
    const action = modeOf([facts({ writes: [ORM_INSERT] })]);
    expect(action.mode).toBe('lease');
    expect(action.modeReason).toContain('the insert into booking at src/routes/bookings.ts:14');
    expect(action.modeReason).not.toContain('rolls all of it back');
  });

  it("a handler that takes the claim's transaction stays transactional, and the reason says its writes run there (also once apply set the mode)", () => {
    const action = modeOf([facts({ writes: [ORM_INSERT], claimTransaction: true })]);
    expect(action.mode).toBe('transactional');
    expect(action.modeReason).toMatch(/^Transactional \(its writes, starting with the insert into booking at src\/routes\/bookings\.ts:14, run on the claim's transaction\)/);
    const configured = modeOf([facts({ writes: [ORM_INSERT], claimTransaction: true })], 'transactional');
    expect(configured.modeReason).toMatch(/^Transactional \(set in the configuration; its writes, starting with the insert into booking at src\/routes\/bookings\.ts:14, run on the claim's transaction\)/);
  });

  it('a handler with no write the inspector recognises stays transactional; a configured mode always wins', () => {
    expect(modeOf([facts({})]).mode).toBe('transactional');
    expect(modeOf([facts({ writes: [ORM_INSERT] })], 'transactional').mode).toBe('transactional');
  });
});
