import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runInit } from '../../src/cli/init.js';
import { inspectProject } from '../../src/inspect/index.js';
import { createLogger } from '../../src/logger.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';
import { tempProject } from '../helpers/tempProject.js';

/** The shapes of vercel/ai-chatbot@9d5d8a3 (Next.js 16, Auth.js, an AI SDK chat route), rebuilt small. */
const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'chat', dependencies: { next: '16.0.10', 'next-auth': '5.0.0-beta.25', ai: '6.0.37', 'drizzle-orm': '^0.34.0', postgres: '^3.4.4' } }),
  'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, paths: { '@/*': ['./*'] } } }),
  'app/(auth)/auth.ts': `import NextAuth from 'next-auth';
export const {
  handlers: { GET, POST },
  auth,
  signIn,
} = NextAuth({ providers: [] });
`,
  'app/(auth)/api/auth/[...nextauth]/route.ts': `export { GET, POST } from '@/app/(auth)/auth';\n`,
  'app/(chat)/api/chat/route.ts': `import { createUIMessageStreamResponse, streamText } from 'ai';
import { auth } from '@/app/(auth)/auth';
import { saveChat } from '@/lib/queries';
export async function POST(request: Request) {
  const { id, message } = await request.json();
  const session = await auth();
  if (!session?.user) return new Response('unauthorized:chat', { status: 401 });
  await saveChat({ id, userId: session.user.id, message });
  return createUIMessageStreamResponse({ stream: streamText({ prompt: message }).toUIMessageStream() });
}
`,
  'app/(chat)/api/document/route.ts': `import { auth } from '@/app/(auth)/auth';
import { saveDocument } from '@/lib/queries';
export async function POST(request: Request) {
  const session = await auth();
  if (!session?.user) return Response.json({ code: 'unauthorized:document' }, { status: 403 });
  const { title, content } = await request.json();
  return Response.json(await saveDocument({ title, content, userId: session.user.id }));
}
`,
  'app/(chat)/actions.ts': `'use server';
import { generateText } from 'ai';
export async function generateTitleFromUserMessage({ message }: { message: string }) {
  const { text } = await generateText({ prompt: message });
  return text.trim();
}
export async function saveChatModelAsCookie(model: string) {
  return model;
}
`,
  'lib/queries.ts': `import { db, chat, document } from './db';
export async function saveChat(values: { id: string; userId: string; message: string }) {
  return db.insert(chat).values(values);
}
export async function saveDocument(values: { title: string; content: string; userId: string }) {
  return db.insert(document).values(values).returning();
}
`,
  'lib/db.ts': 'export const db: any = {};\nexport const chat = {};\nexport const document = {};\n',
  'proxy.ts': `import { NextResponse, type NextRequest } from 'next/server';
import { getToken } from 'next-auth/jwt';
export async function proxy(request: NextRequest) {
  const token = await getToken({ req: request });
  return token ? NextResponse.next() : NextResponse.redirect(new URL('/api/auth/guest', request.url));
}
export const config = { matcher: ['/', '/api/:path*'] };
`,
};

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function project(): Promise<string> {
  const dir = await tempProject(FILES, 'ib-chat-');
  dirs.push(dir);
  return dir;
}

describe('an AI chat app on Next.js 16 (vercel/ai-chatbot shapes)', { timeout: CLI_TEST_TIMEOUT }, () => {
  it("reads NextAuth's re-exported handlers as theirs, and marks the chat route as streaming its answer", async () => {
    const inspection = await inspectProject(await project());
    const endpoints = inspection.findings.filter((f) => f.kind === 'endpoint');
    const nextAuth = endpoints.find((f) => f.path.startsWith('/api/auth'));
    // Not the body fields of the chat and document routes' POST functions.
    expect(nextAuth?.bodyFields).toBeUndefined();
    expect(endpoints.find((f) => f.path === '/api/chat')?.streamsResponse).toBe(true);
    expect(endpoints.find((f) => f.path === '/api/document')?.streamsResponse).toBeUndefined();
  });

  it('protects the document route per user; not the streamed chat, a title generator or a cookie setter', async () => {
    const dir = await project();
    const out = new PassThrough();
    out.resume();
    await runInit({ cwd: dir, yes: true, date: '2026-01-15' }, { interactive: false, log: createLogger({ out, err: out, color: false }) });
    const config = JSON.parse(await readFile(path.join(dir, 'idempotency.config.json'), 'utf8')) as { actions: Array<{ name: string; route: string; scope?: string }>; assumptions: string[] };
    expect(config.actions.map((a) => a.route)).toEqual(['POST /api/document']);
    // `await auth()` reads the session: the route has a caller to scope keys to.
    expect(config.actions[0]?.scope).toBeUndefined();
  });
});
