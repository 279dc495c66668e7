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
    const [strict] = buildFigures(nestjsAdyenSaga);
    expect(strict!.mermaid).toContain('mismatch["422 problem+json, stored body never returned"]');
    expect(strict!.mermaid).toContain('status -->|"PROCESSING, lease live"| busy');
    expect(strict!.mermaid).not.toContain('wait');
    expect(strict!.mermaid).toContain('claim -->|"store down or slower than 100ms"| storeDown');
    expect(strict!.mermaid).toContain('storeDown["503 + Retry-After: 1, fail closed"]');
    expect(strict!.mermaid).toContain('reclaim -->|"won"| execute');
    expect(strict!.mermaid).toContain('reclaim -->|"lost"| busy');
    expect(strict!.mermaid).toContain('execute -->|"throws or 5xx"| release');

    const [waiting] = buildFigures(expressStripe);
    expect(waiting!.mermaid).toContain('mismatch["409 problem+json, stored body never returned"]');
    expect(waiting!.mermaid).toContain('wait{"completes within 2s?"}');
    expect(waiting!.mermaid).toContain('wait -->|"yes"| replay');
    expect(waiting!.caption).toContain('waits up to 2s');
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
        '    claimed --> rolledBack : reserveInventory fails permanently',
        '    done1 --> undo1 : authorisePayment fails permanently',
        '    done2 --> undo2 : confirmOrder fails permanently',
        '    undo2 --> undo1 : compensated',
        '    undo1 --> rolledBack : compensated',
        '    completed --> [*]',
        '    rolledBack --> [*]',
        '',
      ].join('\n'),
    );
    expect(saga.caption).toContain('compensations in reverse (cancelAuthorisation, then releaseInventory)');
  });

  it('keeps hostile names as inert labels', () => {
    const saga = buildFigures(hostileNames)[1]!;
    expect(saga.mermaid).not.toMatch(/<img|#quot;|&amp;|`|\\/);
    expect(saga.mermaid).toContain('state "‹img src=x onerror=alert(1)› done" as done1');
    expect(saga.mermaid).toContain("undo 'it' ¦ now, (x) [y] ＃quot, ＆amp, --›");
    // Labels never break out of their quotes: one pair per state line.
    for (const line of saga.mermaid.split('\n').filter((l) => l.includes('state "'))) expect(line.match(/"/g)).toHaveLength(2);
  });
});
