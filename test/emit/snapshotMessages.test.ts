import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSnapshot, SNAPSHOT_PATH, snapshotFile, snapshotOf } from '../../src/emit/protectionSnapshot.js';
import type { ActionCodeFacts } from '../../src/model/codeFacts.js';

const facts: ActionCodeFacts = {
  action: 'sendVerificationEmail',
  handler: { file: 'src/controllers/auth.controller.js', line: 39, name: 'sendVerificationEmail' },
  calls: [],
  writes: [{ target: 'Token', kind: 'create', file: 'src/services/token.service.js', line: 38 }],
  messages: [{ channel: 'email', library: 'nodemailer', operation: 'sendMail', file: 'src/services/email.service.js', line: 23, keyed: false, via: 'sendEmail' }],
  budgets: [],
};

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function written(contents: string): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'ib-snapshot-'));
  dirs.push(root);
  await mkdir(path.join(root, path.dirname(SNAPSHOT_PATH)), { recursive: true });
  await writeFile(path.join(root, SNAPSHOT_PATH), contents);
  return root;
}

describe('the snapshot keeps the messages an action sends', () => {
  it('round-trips them, so generate says what init read', async () => {
    const [file] = snapshotFile(snapshotOf({ inspection: { findings: [] }, codeFindings: [], actionFacts: [facts] }));
    const back = await readSnapshot(await written(file!.contents));
    expect(back.actionFacts).toEqual([facts]);
  });

  it('drops an entry whose messages are malformed, as it does for calls and writes', async () => {
    const [file] = snapshotFile(snapshotOf({ inspection: { findings: [] }, codeFindings: [], actionFacts: [facts] }));
    const broken = file!.contents.replace('"channel": "email"', '"channel": "pigeon"');
    expect((await readSnapshot(await written(broken))).actionFacts).toBeUndefined();
  });
});
