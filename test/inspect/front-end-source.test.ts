import { describe, expect, it } from 'vitest';
import { isFrontEndSource } from '../../src/inspect/files/isFrontEnd.js';

describe('browser code is told by its code, not its comments', () => {
  it('a server middleware whose comment quotes browser code is server code', () => {
    const middleware = [
      "import { createMiddleware } from 'hono/factory';",
      '/**',
      " * The embed page does `window.location.href = '/signin'` inside the iframe, so frame-ancestors must allow it.",
      ' */',
      '// document.cookie is never read here',
      "export const headers = createMiddleware(async (c, next) => { await next(); c.res.headers.set('X-Frame-Options', 'DENY'); });",
    ].join('\n');
    expect(isFrontEndSource(middleware)).toBe(false);
  });

  it('code that uses browser globals, imports React or says "use client" is browser code', () => {
    expect(isFrontEndSource("export function go() { window.location.href = '/signin'; }")).toBe(true);
    expect(isFrontEndSource("import { useState } from 'react';\nexport const A = () => null;")).toBe(true);
    expect(isFrontEndSource("// a client component\n'use client';\nexport const A = () => null;")).toBe(true);
    expect(isFrontEndSource("const url = 'https://example.com'; fetch('/api/orders');")).toBe(true);
  });

  it('next/navigation is browser code only for its hooks: a server helper calls redirect() from it', () => {
    // nextjs/saas-starter's lib/payments/stripe.ts creates the checkout session, then redirect(session.url).
    expect(isFrontEndSource("import { redirect } from 'next/navigation';\nexport async function go() { redirect('/pricing'); }")).toBe(false);
    expect(isFrontEndSource("import { notFound, redirect } from 'next/navigation';")).toBe(false);
    expect(isFrontEndSource("import { useRouter } from 'next/navigation';\nexport const A = () => useRouter();")).toBe(true);
    expect(isFrontEndSource("import { redirect, useSearchParams } from 'next/navigation';")).toBe(true);
  });
});
