import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatInspection } from '../../src/inspect/formatInspection.js';
import { inspectProject } from '../../src/inspect/index.js';

/**
 * A tree built to trip a walker: a symlink loop, a symlinked duplicate, a 2 MB bundle, git-ignored and built
 * copies of real routes, and a file with a syntax error. Inline because symlinks do not survive git on every OS.
 */
describe('inspect a hostile tree', () => {
  let root: string;
  const route = (p: string) => `import express from 'express';\nconst app = express();\napp.post('${p}', (_req, res) => res.sendStatus(201));\n`;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'inspect-hostile-'));
    const write = async (rel: string, text: string) => {
      await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
      await writeFile(path.join(root, rel), text);
    };
    await write('package.json', JSON.stringify({ name: 'hostile', dependencies: { express: '4.19.2' } }));
    await write('.gitignore', '# local copies\n/generated/\n*.local.ts\n!keep.local.ts\n');
    await write('src/app.ts', route('/orders'));
    await write('src/keep.local.ts', route('/kept'));
    await write('src/scratch.local.ts', route('/scratch'));
    await write('generated/app.ts', route('/generated'));
    await write('dist/app.js', route('/dist'));
    await write('node_modules/lib/index.js', route('/node-modules'));
    await write('src/vendor.bundle.js', `${route('/bundle')}//${'x'.repeat(2 * 1024 * 1024)}\n`);
    await write('src/broken.ts', "import express from 'express';\nconst app = express();\napp.post('/broken', (req, res) => {\n  res.send(;\n});\n");
    await symlink(path.join(root, 'src'), path.join(root, 'src', 'loop'), 'dir');
    await symlink(path.join(root, 'src'), path.join(root, 'mirror'), 'dir');
  });

  describe('hostile beyond the project', () => {
    let hostile: string;
    const nested = 'deep/'.repeat(40);

    beforeAll(async () => {
      hostile = await mkdtemp(path.join(tmpdir(), 'inspect-escape-'));
      const write = async (rel: string, text: string) => {
        await mkdir(path.dirname(path.join(hostile, rel)), { recursive: true });
        await writeFile(path.join(hostile, rel), text);
      };
      await write('package.json', JSON.stringify({ name: 'escape', dependencies: { express: '4.19.2' } }));
      // Patterns that made the hand-written matcher backtrack exponentially on a deep path.
      await write('.gitignore', `${'**/'.repeat(30)}*.generated.ts
${'a*'.repeat(20)}b
`);
      await write('src/app.ts', route('/orders'));
      await write(`src/${nested}handler.ts`, route('/nested'));
      await write(`src/${nested}skip.generated.ts`, route('/generated'));
      await write('src/evil\u001b[2J\u202e.ts', route('/evil'));
      // A payment file nested far deeper than any real code: the parser cannot take it, the run must go on.
      await write('src/deep-payment.ts', `export const payment = ${'[\n'.repeat(60_000)}${']\n'.repeat(60_000)};\n`);
      await symlink('/', path.join(hostile, 'rootfs'), 'dir');
      await symlink(path.dirname(hostile), path.join(hostile, 'src', 'parent'), 'dir');
      await symlink('/etc/hostname', path.join(hostile, 'src', 'stolen.ts'), 'file');
    });

    afterAll(async () => {
      await rm(hostile, { recursive: true, force: true });
    });

    it('stays inside the project, survives the unparseable file, and escapes names for the terminal', async () => {
      const inspection = await inspectProject(hostile);
      // Findings keep the real name (JSON output escapes it); the human report escapes it below.
      expect(inspection.findings.map((f) => `${f.file}:${f.line} ${f.id}`)).toEqual([
        'src/app.ts:3 POST /orders',
        `src/${nested}handler.ts:3 POST /nested`,
        'src/evil\u001b[2J\u202e.ts:3 POST /evil',
      ]);
      expect(inspection.warnings).toEqual([
        'rootfs: symlink to a path outside the project; not followed.',
        expect.stringMatching(/^src\/deep-payment\.ts: skipped, nested too deeply to parse; the rest of the project was inspected\.$/),
        'src/parent: symlink to a path outside the project; not followed.',
        'src/stolen.ts: symlink to a path outside the project; not followed.',
      ]);
      const printed = formatInspection(inspection, { value: (v) => String(v), dim: (v) => v });
      expect(printed).toContain('src/evil\\u001b[2J\\u202e.ts:3');
      // eslint-disable-next-line no-control-regex -- no raw control character may reach the terminal
      expect(printed).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/);
    });
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('reports each real route once and explains what it skipped', async () => {
    const { findings, warnings } = await inspectProject(root);
    expect(findings.map((f) => `${f.file}:${f.line} ${f.id}`)).toEqual([
      'src/app.ts:3 POST /orders',
      'src/broken.ts:3 POST /broken',
      'src/keep.local.ts:3 POST /kept',
    ]);
    expect(warnings).toEqual([
      'mirror: directory already visited through a symlink; not followed again.',
      "src/broken.ts:4: syntax error (')' expected.); analysed what could be parsed.",
      'src/loop: directory already visited through a symlink; not followed again.',
      'src/vendor.bundle.js: skipped, larger than 1 MB (2048 KB); likely generated or bundled.',
    ]);
  });
});
