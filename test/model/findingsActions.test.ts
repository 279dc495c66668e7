import { describe, expect, it } from 'vitest';
import type { CodeFinding } from '../../src/findings/types.js';
import { buildFindings } from '../../src/model/findings.js';

/** Four Express routes in one file; createSubscription and createTopup both call the chargeCard helper (lines 7-9). */
const ACTIONS = [
  { name: 'createPayment', source: 'src/routes.ts:11' },
  { name: 'createRefund', source: 'src/routes.ts:16' },
  { name: 'createSubscription', source: 'src/routes.ts:21' },
  { name: 'createTopup', source: 'src/routes.ts:26' },
];
const SPANS = new Map([
  ['createPayment', [{ file: 'src/routes.ts', from: 11, to: 14 }]],
  ['createRefund', [{ file: 'src/routes.ts', from: 16, to: 19 }]],
  ['createSubscription', [{ file: 'src/routes.ts', from: 21, to: 24 }, { file: 'src/routes.ts', from: 7, to: 9 }]],
  ['createTopup', [{ file: 'src/routes.ts', from: 26, to: 29 }, { file: 'src/routes.ts', from: 7, to: 9 }]],
]);

function finding(line: number, ruleId = 'client-controlled-amount'): CodeFinding {
  return { ruleId, title: 'Amount from the client', severity: 'warning', file: 'src/routes.ts', line, column: 3, message: `at line ${line}`, evidence: '', fix: 'Price it on the server.', docsAnchor: ruleId, fingerprint: `${ruleId}:${line}` };
}

describe('a finding in a file several actions share goes to every action whose code holds it', () => {
  it('a helper two handlers call belongs to both; a line in one handler to that one only; the list holds each finding once', () => {
    const found = buildFindings([finding(8), finding(12), finding(27)], ACTIONS, SPANS);
    expect(found.map((f) => [f.location, f.actions])).toEqual([
      ['src/routes.ts:8', ['createSubscription', 'createTopup']],
      ['src/routes.ts:12', ['createPayment']],
      ['src/routes.ts:27', ['createTopup']],
    ]);
  });

  it('an action whose handler was not followed gets its file, minus the code its neighbours were followed into', () => {
    const spans = new Map([...SPANS].filter(([name]) => name !== 'createRefund'));
    const found = buildFindings([finding(12), finding(17), finding(8)], ACTIONS, spans);
    expect(found.map((f) => [f.location, f.actions])).toEqual([
      ['src/routes.ts:8', ['createSubscription', 'createTopup']],
      ['src/routes.ts:12', ['createPayment']],
      ['src/routes.ts:17', ['createRefund']],
    ]);
  });

  it('without any followed code (a config-only design) every action of the file is named: nothing to tell them apart', () => {
    expect(buildFindings([finding(12)], ACTIONS).map((f) => f.actions)).toEqual([ACTIONS.map((a) => a.name)]);
  });
});
