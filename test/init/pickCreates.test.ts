import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';
import type { Inspection } from '../../src/inspect/types.js';
import { actionsFromInspection } from '../../src/questions/actionsFromInspection.js';
import { pickCreates } from '../../src/questions/pickCreates.js';
import { resolveAnswers } from '../../src/questions/resolveAnswers.js';

/** A RealWorld-style CRUD app (Express + Prisma): no payment, no webhook, nothing a pre-check list calls harmful. */
const ROOT = path.resolve('fixtures/projects/realworld-crud');

const STACK: Inspection['stack'] = { language: 'typescript', frameworks: ['express'], databases: ['postgres'], orms: ['prisma'], brokers: [], testFramework: 'vitest', packageManager: 'npm', payments: ['stripe'] };

describe('pickCreates', () => {
  it('in a plain CRUD app, picks five create POSTs: those whose code inserts a record first, sign-in and idempotent methods never', async () => {
    const inspection = await inspectProject(ROOT);
    const candidates = actionsFromInspection(inspection);
    expect(candidates.some((c) => c.checked)).toBe(false);
    // POST /tags inserts too but ranks inside its file after /users; /follow (an update) is left out by the cap.
    expect(pickCreates(candidates).map((a) => `${a.name} ${a.route}`)).toEqual([
      'createArticle POST /api/articles',
      'createComment POST /api/articles/:slug/comments',
      'createUser POST /api/users',
      'createTag POST /api/tags',
      'createFavorite POST /api/articles/:slug/favorite',
    ]);
  }, 120_000);

  it('ranks a payment, then a webhook, then an inserting POST, then any other POST', () => {
    const inspection: Inspection = {
      root: '/shop',
      stack: STACK,
      warnings: [],
      findings: [
        { kind: 'endpoint', id: 'a', file: 'src/a.ts', line: 1, method: 'POST', path: '/reports', framework: 'express', prefixResolved: true },
        { kind: 'endpoint', id: 'b', file: 'src/a.ts', line: 5, method: 'POST', path: '/notes', framework: 'express', prefixResolved: true, insertsRecord: true },
        { kind: 'webhook', id: 'c', file: 'src/hooks.ts', line: 3, provider: 'stripe', verifiesSignature: true, dedupesEventId: false, route: '/webhooks/stripe' },
        { kind: 'endpoint', id: 'd', file: 'src/pay.ts', line: 9, method: 'POST', path: '/charges', framework: 'express', prefixResolved: true, touchesPayment: true },
        { kind: 'endpoint', id: 'e', file: 'src/a.ts', line: 9, method: 'PATCH', path: '/notes/:id', framework: 'express', prefixResolved: true, insertsRecord: true },
      ],
    };
    expect(pickCreates(actionsFromInspection(inspection)).map((a) => a.route)).toEqual(['POST /charges', 'POST /webhooks/stripe', 'POST /notes', 'POST /reports']);
  });

  it('counts one route once: alternative controllers of one endpoint are all kept and take one of the five places', () => {
    // The shape of brocoders/nestjs-boilerplate@9620f15: three uploaders (local, s3, s3-presigned) serve POST /v1/files/upload.
    const post = (id: string, file: string, path: string): Inspection['findings'][number] => ({ kind: 'endpoint', id, file, line: 3, method: 'POST', path, framework: 'nestjs', prefixResolved: true, insertsRecord: true, handler: `${id}Handler` });
    const findings = [
      post('a', 'src/auth.controller.ts', '/v1/auth/email/register'),
      post('b', 'src/files/local/files.controller.ts', '/v1/files/upload'),
      post('c', 'src/files/s3/files.controller.ts', '/v1/files/upload'),
      post('d', 'src/files/s3-presigned/files.controller.ts', '/v1/files/upload'),
      ...['users', 'posts', 'tags', 'notes', 'reports'].map((name, i) => post(`e${i}`, `src/${name}.controller.ts`, `/v1/${name}`)),
    ];
    const picked = pickCreates(actionsFromInspection({ root: '/p', stack: STACK, warnings: [], findings })).map((a) => a.route);
    expect(picked).toEqual(['POST /v1/auth/email/register', 'POST /v1/files/upload', 'POST /v1/files/upload', 'POST /v1/files/upload', 'POST /v1/users', 'POST /v1/posts', 'POST /v1/tags']);
  });

  it('init --yes protects the picked endpoints, not the placeholder, and says why in the assumptions', async () => {
    const inspection = await inspectProject(ROOT);
    const { answers, assumptions, sources } = await resolveAnswers({ flags: {}, config: {}, inspection, cwd: ROOT, interactive: false, yes: true });
    expect(sources.actions).toBe('inspection');
    expect(answers.actions.map((a) => a.name)).toEqual(['createArticle', 'createComment', 'createUser', 'createTag', 'createFavorite']);
    expect(answers.actions[0]).toMatchObject({ route: 'POST /api/articles', source: 'src/routes/articles.ts:10' });
    expect(assumptions.join('\n')).toContain('create endpoints init picked (createArticle, createComment, createUser, createTag, createFavorite');
    expect(assumptions.join('\n')).not.toContain('genericProtectedAction');
  }, 120_000);
});
