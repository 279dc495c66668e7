import { describe, expect, it } from 'vitest';
import { buildFigures } from '../../src/diagrams/buildFigures.js';
import { allModels, expressStripe, hostileNames, minimalOneAction, nestjsAdyenSaga } from './models.js';
import { mermaidParse } from './mermaidParser.js';

describe('buildFigures', () => {
  it('parses every emitted diagram with mermaid’s own parser', async () => {
    for (const [name, model] of Object.entries(allModels)) {
      for (const figure of buildFigures(model)) {
        await expect(mermaidParse(figure.mermaid), `${name}/${figure.id}`).resolves.toBeTruthy();
      }
    }
  });

  it('has a parser that really rejects broken Mermaid (so the check above means something)', async () => {
    await expect(mermaidParse('flowchart TD\n    a["x"] --> b["y"]\n    c["unterminated]\n')).rejects.toThrow();
    await expect(mermaidParse('stateDiagram-v2\n    state "a "b" as s1\n')).rejects.toThrow();
  });

  it('draws the flowchart only when the model says it pays off, and one state machine per saga', () => {
    expect(buildFigures(nestjsAdyenSaga).map((f) => f.id)).toEqual(['request-flow', 'saga-submit-order']);
    expect(buildFigures(minimalOneAction)).toEqual([]);
    const hostile = buildFigures(hostileNames).map((f) => f.id);
    expect(hostile).toEqual(['request-flow', 'saga-img-src-x-onerror-alert-1', 'saga-img-src-x-onerror-alert-1-2']);
  });

  it('reflects the configured policies in the flowchart', () => {
    const strict = buildFigures(nestjsAdyenSaga)[0]!.mermaid;
    expect(strict).toContain('receive("request or message with Idempotency-Key")');
    expect(strict).toContain('mismatch["422 problem+json<br>stored body never returned"]');
    expect(strict).toContain('status -->|"PROCESSING<br>lease live"| busy');
    expect(strict).not.toContain('wait');
    expect(strict).toContain('claim -->|"store down or<br>slower than 100ms"| storeDown');
    expect(strict).toContain('storeDown["503 + Retry-After: 1<br>fail closed"]');
    expect(strict).toContain('status -->|"PROCESSING<br>lease expired"| reclaim');
    expect(strict).toContain('reclaim -->|"won<br>new fencing token"| execute');
    expect(strict).toContain('reclaim -->|"lost"| busy');
    expect(strict).toContain('execute -->|"success or<br>definitive 4xx"| persist');
    expect(strict).toContain('execute -->|"throws or 5xx"| release');
    expect(strict).toContain('release["release claim: a retry re-executes<br>with the same provider keys"]');

    const waiting = buildFigures(expressStripe)[0]!;
    expect(waiting.mermaid).toContain('receive("request with Idempotency-Key")');
    expect(waiting.mermaid).toContain('mismatch["409 problem+json<br>stored body never returned"]');
    expect(waiting.mermaid).toContain('busy["409 + Retry-After: 2<br>still in progress"]');
    expect(waiting.mermaid).toContain('wait{"done in 2s?"}');
    expect(waiting.mermaid).toContain('status -->|"PROCESSING<br>lease live"| wait');
    expect(waiting.mermaid).toContain('wait -->|"yes"| replay');
    expect(waiting.mermaid).toContain('wait -->|"no"| busy');
    expect(waiting.caption).toContain('waits up to 2s');
  });

  it('draws every step, every failure edge and the compensations in reverse order', () => {
    const saga = buildFigures(nestjsAdyenSaga)[1]!;
    expect(saga.mermaid).toBe(
      [
        'stateDiagram-v2',
        '    state "key claimed" as claimed',
        '    state "reserveInventory done" as done1',
        '    state "authorisePayment done" as done2',
        '    state "COMPLETED" as completed',
        '    state "cancelAuthorisation (undo authorisePayment)" as undo2',
        '    state "releaseInventory (undo reserveInventory)" as undo1',
        '    state "ROLLED_BACK" as rolledBack',
        '    [*] --> claimed',
        '    claimed --> done1 : reserveInventory',
        '    done1 --> done2 : authorisePayment',
        '    done2 --> completed : confirmOrder',
        '    claimed --> rolledBack : reserveInventory fails',
        '    done1 --> undo1 : authorisePayment fails',
        '    done2 --> undo2 : confirmOrder fails',
        '    undo2 --> undo1 : compensated',
        '    undo1 --> rolledBack : compensated',
        '    completed --> [*]',
        '    rolledBack --> [*]',
        '',
      ].join('\n'),
    );
    expect(saga.caption).toContain('compensations in reverse (cancelAuthorisation, then releaseInventory)');
    expect(saga.caption).not.toContain('no compensation');
  });

  it('keeps hostile names as inert labels', () => {
    const saga = buildFigures(hostileNames)[1]!;
    expect(saga.mermaid).not.toMatch(/<img|#quot;|&amp;|`|\\|;/);
    expect(saga.mermaid).toContain('state "‹img src=x onerror=alert(1)› done" as done1');
    expect(saga.mermaid).toContain("undo 'it' ¦ now, (x) [y] #quot, &amp, --›");
    // A step without compensation before the last one is named in the caption.
    expect(buildFigures(hostileNames)[2]!.caption).toContain('no step before the last has a compensation');
  });

  it('names steps whose effect a rollback cannot undo', () => {
    const model = { ...nestjsAdyenSaga, sagas: [{ action: 'ship', slug: 'ship', steps: [{ name: 'pack', compensation: 'unpack' }, { name: 'label' }, { name: 'dispatch' }] }] };
    const saga = buildFigures(model)[1]!;
    expect(saga.caption).toContain('label has no compensation, so its effect stays after a rollback.');
    expect(saga.mermaid).toContain('done2 --> undo1 : dispatch fails');
    expect(saga.mermaid).toContain('done1 --> undo1 : label fails');
    // Labels never break out of their quotes: one pair per state line.
    for (const line of saga.mermaid.split('\n').filter((l) => l.includes('state "'))) expect(line.match(/"/g)).toHaveLength(2);
  });
});
