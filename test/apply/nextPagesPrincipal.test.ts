import { execFile } from 'node:child_process';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { copyFixture, ROOT, type FixtureCopy } from './fixtureApp.js';

const run = promisify(execFile);

/**
 * boxyhq/saas-starter-kit: a Pages Router app whose own lib/session.ts exports getSession(req, res), handing both to
 * next-auth's getServerSession. The Pages wrapper gives the principal the route's req and res, and the instance reads
 * the session through the app's function. next and next-auth are not installed: a stand-in with the same call shape.
 */
describe('the principal of a Pages Router app that reads its session from req and res', { timeout: 300_000 }, () => {
  let copy: FixtureCopy | undefined;
  afterAll(async () => {
    await copy?.remove();
  });

  it("reads the signed-in user's id through the app's getSession(req, res), and the instance type-checks", async () => {
    copy = await copyFixture('next', (text) => {
      const config = JSON.parse(text) as { actions: unknown[] };
      config.actions.push({ name: 'inviteMember', trigger: 'http', route: 'POST /api/invite', significantFields: ['email'], source: 'pages/api/invite.ts:8' });
      return JSON.stringify(config, null, 2);
    });
    const write = async (file: string, text: string) => {
      await mkdir(path.dirname(path.join(copy!.dir, file)), { recursive: true });
      await writeFile(path.join(copy!.dir, file), text);
    };
    // Declared (not installed) so inspection reads the Pages route as Next.js's.
    const manifest = JSON.parse(await readFile(path.join(copy.dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    await write('package.json', JSON.stringify({ ...manifest, dependencies: { ...manifest.dependencies, next: '15.5.0' } }, null, 2));
    await write(
      'lib/session.ts',
      "import type { IncomingMessage, ServerResponse } from 'node:http';\n\n// Stands in for next-auth's getServerSession(req, res, options).\nasync function getServerSession(req: IncomingMessage, res: ServerResponse, options: object): Promise<{ user: { id: string } } | null> {\n  return req.headers.cookie && res && options ? { user: { id: 'user-1' } } : null;\n}\n\nexport const getSession = async (req: IncomingMessage & { cookies?: Record<string, string> }, res: ServerResponse) => {\n  return await getServerSession(req, res, {});\n};\n",
    );
    await write(
      'pages/api/invite.ts',
      "import type { IncomingMessage, ServerResponse } from 'node:http';\n\ntype Req = IncomingMessage & { body?: { email?: string } };\n\nasync function handlePOST(req: Req, res: ServerResponse) {\n  res.end(JSON.stringify({ invited: req.body?.email }));\n}\nexport default async function handler(req: Req, res: ServerResponse) {\n  if (req.method === 'POST') return handlePOST(req, res);\n  res.statusCode = 405;\n  res.end();\n}\n",
    );
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true, action: 'inviteMember' }, { interactive: false });
    expect(first.stale).toEqual([]);
    const instance = await readFile(path.join(copy.dir, 'lib/idempotency/instance.ts'), 'utf8');
    expect(instance).toContain("import { getSession } from '../session';");
    expect(instance).toContain('principal: async (request, _scope, response) =>\n    response ? ((await getSession(request as never, response as never))?.user as { id?: string } | undefined)?.id : undefined,');
    expect(first.manual.map((m) => m.reason)).not.toContainEqual(expect.stringContaining('make principal in'));
    // Its handler never reads the session: a signed-out caller would be refused, and the step says what to do.
    expect(first.manual.filter((m) => m.action === 'inviteMember').map((m) => m.reason)).toContainEqual(expect.stringContaining('nothing in its handler (nor what it calls) reads the session, and no middleware.ts runs for it: for a signed-out caller the principal'));
    // The scaffold, the app's session module, the wrapped route and the instance, under the fixture's compiler options.
    const tsconfig = JSON.parse(await readFile(path.join(copy.dir, 'tsconfig.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(path.join(copy.dir, 'tsconfig.pages.json'), JSON.stringify({ ...tsconfig, include: ['lib/**/*.ts', 'pages/**/*.ts'], exclude: ['**/*.test.ts'] }));
    const output = await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.pages.json'], { cwd: copy.dir }).then(
      () => '',
      (error: { stdout?: string }) => String(error.stdout ?? error),
    );
    expect(output).toBe('');
  });
});
