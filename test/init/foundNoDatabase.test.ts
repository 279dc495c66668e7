import { describe, expect, it } from 'vitest';
import type { EndpointFinding, Inspection, StackFacts } from '../../src/inspect/types.js';
import { resolveAnswers } from '../../src/questions/resolveAnswers.js';
import { ACCEPT, createScriptedPrompter } from '../../src/questions/scriptedPrompter.js';
import { foundNoDatabase } from '../../src/questions/stackFromInspection.js';

const BARE: Omit<StackFacts, 'packages'> = {
  language: 'typescript', frameworks: ['express'], databases: [], orms: [], brokers: [], testFramework: 'vitest', packageManager: 'npm', payments: ['stripe'],
};
const endpoint: EndpointFinding = { kind: 'endpoint', id: 'POST /donations', file: 'src/routes/donations.ts', line: 7, method: 'POST', path: '/donations', framework: 'express', prefixResolved: true, bodyFields: ['amount', 'currency', 'email'] };
const inspected = (stack: Partial<StackFacts> = {}, manifestRead = true): Inspection => ({
  root: '/donations-relay',
  stack: { ...BARE, ...stack },
  findings: [endpoint],
  warnings: [],
  manifestRead,
});

describe('foundNoDatabase: "the project has none" is not "nobody said"', () => {
  it('a read package.json without any database client, ORM or database-backed queue', () => {
    expect(foundNoDatabase(inspected())).toBe(true);
    // Brokers that keep no state of the app's (Kafka, SQS) leave it without a database.
    expect(foundNoDatabase(inspected({ brokers: ['kafka'] }))).toBe(true);
  });

  it('an ORM whose database was not told, or a queue that lives in Redis or PostgreSQL, is a database', () => {
    expect(foundNoDatabase(inspected({ orms: ['knex'] }))).toBe(false);
    expect(foundNoDatabase(inspected({ brokers: ['bullmq'] }))).toBe(false);
    expect(foundNoDatabase(inspected({ brokers: ['pg-boss'] }))).toBe(false);
    expect(foundNoDatabase(inspected({ databases: ['redis'] }))).toBe(false);
  });

  it('no manifest read (or no inspection at all) says nothing about the database', () => {
    expect(foundNoDatabase(inspected({}, false))).toBe(false);
    expect(foundNoDatabase({ ...inspected(), manifestRead: undefined })).toBe(false);
  });

  it('in a monorepo, another package with a database client means the repository has one', () => {
    const packages = [
      { dir: 'apps/api', name: 'api', stack: BARE },
      { dir: 'apps/ledger', name: 'ledger', stack: { ...BARE, databases: ['postgres'], orms: ['pg'] } },
    ];
    expect(foundNoDatabase(inspected({ packages }))).toBe(false);
    expect(foundNoDatabase(inspected({ packages: [packages[0]!] }))).toBe(true);
  });
});

describe('interactive init on a project without a database', () => {
  it('proposes SQLite in the stack confirmation and a single server as the deployment default', async () => {
    const prompter = createScriptedPrompter([
      { id: 'format', answer: ACCEPT },
      { id: 'output', answer: ACCEPT },
      { id: 'actions', answer: ACCEPT },
      { id: 'stack:confirm', answer: true },
      { id: 'retrySources', answer: ACCEPT },
      { id: 'payments', answer: ACCEPT },
      { id: 'concurrency', answer: ACCEPT },
      { id: 'retention', answer: ACCEPT },
      { id: 'detectionLatency', answer: ACCEPT },
      { id: 'scaffold', answer: ACCEPT },
    ]);
    const { answers, storeNote } = await resolveAnswers({ flags: {}, config: {}, inspection: inspected(), cwd: '/donations-relay', interactive: true, yes: false, prompter });
    prompter.assertDone();
    const confirm = prompter.asked.find((q) => q.id === 'stack:confirm');
    expect(confirm?.message).toContain('database SQLite');
    expect(confirm?.help).toContain('No database was found: SQLite is the embedded store for one instance.');
    expect(answers.stack.database).toBe('sqlite');
    expect(answers.concurrency).toBe('single-server');
    expect(storeNote).toContain('embedded SQLite file');
  });
});

describe('init --yes: SQLite needs the rest of the stack known', () => {
  const yes = (inspection: Inspection) =>
    resolveAnswers({ flags: {}, config: {}, inspection, cwd: '/donations-relay', interactive: false, yes: true });

  it('a known language and framework without a database: SQLite on one instance', async () => {
    const { answers } = await yes(inspected());
    expect(answers.stack).toMatchObject({ framework: 'express', database: 'sqlite' });
    expect(answers.concurrency).toBe('single-server');
  });

  it('an unknown framework keeps the technology-agnostic design on the PostgreSQL reference, whose scaffold is PostgreSQL too', async () => {
    const { answers, storeNote } = await yes({ ...inspected({ frameworks: [] }), findings: [] });
    expect(answers.stack).toMatchObject({ framework: 'unknown', database: 'unknown' });
    expect(answers.concurrency).toBe('multi-instance');
    expect(storeNote).toBeUndefined();
  });
});

