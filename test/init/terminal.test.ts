import { execFileSync, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BIN } from './runBuiltCli.js';
import { listFiles, projectFrom, readConfig } from './wizardHarness.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
if (!hasTmux) console.log('Skipping the real-terminal init tests: tmux is not installed (apt-get install tmux).');

// A private tmux server per test file, so parallel runs and the user's own tmux are never touched.
const SOCKET = `ib-init-${process.pid}`;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });

function startWizard(session: string, cwd: string): void {
  const command = `env -u CI NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} init --cwd ${JSON.stringify(cwd)} --date 2026-01-15; echo EXIT=$?; sleep 100000`;
  tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '40', command);
}

const screen = (session: string) => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', session);

let lastScreen = '';

/**
 * Polls the pane until the text shows up. No deadline of its own: on a saturated machine the wizard may take minutes
 * to inspect, and only the test's time-out (a hang detector) should end the wait. On failure the last screen, what a
 * user would have seen, is printed.
 */
async function waitFor(session: string, text: string | RegExp): Promise<string> {
  for (;;) {
    const seen = screen(session);
    lastScreen = seen;
    if (typeof text === 'string' ? seen.includes(text) : text.test(seen)) return seen;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const keys = (session: string, ...sequence: string[]) => tmux('send-keys', '-t', session, ...sequence);

afterAll(() => {
  if (hasTmux) spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
});

describe.skipIf(!hasTmux)('init in a real terminal (tmux)', { timeout: CLI_TEST_TIMEOUT }, () => {
  afterEach(({ task }) => {
    if (task.result?.state === 'fail') console.log(`Last screen:\n${lastScreen}`);
  });

  it('walks the wizard with arrow keys, space and typing to a written Markdown design', async () => {
    const cwd = await projectFrom('express-stripe');
    startWizard('drive', cwd);
    await waitFor('drive', 'Format of the design document?');
    keys('drive', 'Down', 'Enter');
    await waitFor('drive', 'Where should the document go? (docs/idempotency-design.md)');
    keys('drive', 'Enter');
    const checklist = await waitFor('drive', 'Which actions should be protected?');
    expect(checklist).toMatch(/── Touches payments\n.*createPayment POST \/payments/);
    // Leave the refund endpoint out: down to it, toggle it off.
    keys('drive', 'Down', 'Space', 'Enter');
    await waitFor('drive', /Stack: language TypeScript · framework Express · database PostgreSQL .*Correct\?/);
    keys('drive', 'Enter');
    await waitFor('drive', 'Where can duplicates come from?');
    keys('drive', 'Enter');
    await waitFor('drive', 'Which payment providers are involved?');
    keys('drive', 'Enter');
    await waitFor('drive', 'How is the service deployed?');
    keys('drive', 'Up', 'Enter');
    await waitFor('drive', 'How long should a completed request be remembered? (72h)');
    keys('drive', '48h', 'Enter');
    await waitFor('drive', 'How quickly must a duplicate be rejected? (50ms)');
    keys('drive', '20ms', 'Enter');
    await waitFor('drive', 'Folder for the runnable scaffolding?');
    keys('drive', 'Enter');
    const done = await waitFor('drive', /EXIT=\d+/);
    expect(done).toContain('EXIT=0');
    expect(done).toContain('Key decisions');
    expect(done).toContain('created docs/idempotency-design.md');

    const config = await readConfig(cwd);
    expect(config).toMatchObject({ format: 'md', concurrency: 'single-server', retention: '48h', detectionLatency: '20ms', scaffold: { dir: 'src/idempotency' } });
    expect((config['actions'] as Array<{ name: string }>).map((a) => a.name)).toEqual(['createPayment', 'handleStripeWebhook']);
    const doc = await readFile(path.join(cwd, 'docs/idempotency-design.md'), 'utf8');
    expect(doc).toContain('createPayment');
    // The unchecked endpoint gets no design of its own; it is listed with the others init left out, and why.
    expect(doc).not.toContain('### createRefund');
    expect(doc).toMatch(/\| `createRefund` \| HTTP endpoint \| `POST [^`]*\/refunds` · `[^`]+` \| Left out when the actions were chosen, though init pre-selected it \(external or money effect/);
  });

  it('Ctrl-C at a prompt exits 130 and leaves the project untouched', async () => {
    const cwd = await projectFrom('express-stripe');
    const before = await listFiles(cwd);
    startWizard('cancel', cwd);
    await waitFor('cancel', 'Format of the design document?');
    keys('cancel', 'Enter');
    await waitFor('cancel', 'Where should the document go?');
    keys('cancel', 'C-c');
    const done = await waitFor('cancel', /EXIT=\d+/);
    expect(done).toContain('EXIT=130');
    expect(done).toContain('Cancelled; nothing was written.');
    expect(done).not.toMatch(/\bat .+\.js:\d+/);
    expect(await listFiles(cwd)).toEqual(before);
  });
});
