import { describe, expect, it } from 'vitest';
import { middlewareCovers } from '../../src/inspect/resolve/nextMatcher.js';

const middleware = (config: string) => `import { NextResponse } from 'next/server';\nexport function middleware() {\n  return NextResponse.next();\n}\n${config}\n`;

describe("which paths a Next.js middleware's matcher covers", () => {
  it('runs everywhere without a config or without a matcher', () => {
    expect(middlewareCovers(middleware(''), '/api/orders')).toBe(true);
    expect(middlewareCovers(middleware("export const config = { runtime: 'nodejs' };"), '/api/orders')).toBe(true);
  });

  it('named parameters: :path* takes the prefix itself and anything under it, :id one segment', () => {
    const text = middleware("export const config = {\n  matcher: ['/dashboard/:path*', '/api/teams/:slug/invite'],\n};");
    expect(middlewareCovers(text, '/dashboard')).toBe(true);
    expect(middlewareCovers(text, '/dashboard/a/b')).toBe(true);
    expect(middlewareCovers(text, '/api/teams/:slug/invite')).toBe(true);
    expect(middlewareCovers(text, '/api/auth/resend')).toBe(false);
  });

  it("the create-next-app / Clerk style negative lookahead: everything but what it names", () => {
    const text = middleware("export const config = { matcher: '/((?!api|_next/static|_next/image|favicon.ico).*)' };");
    expect(middlewareCovers(text, '/api/auth/resend')).toBe(false);
    expect(middlewareCovers(text, '/settings')).toBe(true);
    const both = middleware("export const config = {\n  matcher: ['/((?!_next|[^?]*\\\\.(?:html?|css|js)).*)', '/(api|trpc)(.*)'],\n};");
    expect(middlewareCovers(both, '/api/checkout')).toBe(true);
  });

  it('says nothing of a matcher it cannot read (objects with has / missing, a computed value)', () => {
    expect(middlewareCovers(middleware("export const config = { matcher: [{ source: '/api/:path*', missing: [{ type: 'header', key: 'x' }] }] };"), '/api/x')).toBeUndefined();
    expect(middlewareCovers(middleware('export const config = { matcher: PATHS };'), '/api/x')).toBeUndefined();
  });
});
