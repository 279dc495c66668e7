import type { StackDesign } from '../../model/types.js';
import { EXPRESS } from '../frameworks/express.js';
import { FASTIFY } from '../frameworks/fastify.js';
import { HONO } from '../frameworks/hono.js';
import { KOA } from '../frameworks/koa.js';
import { NESTJS } from '../frameworks/nestjs.js';
import { NEXT } from '../frameworks/next.js';
import { PLAIN } from '../frameworks/plain.js';
import type { HttpFramework } from '../httpFramework.js';
import type { StaticFile } from '../typescriptRuntime.js';

/** One framework adapter: composed with every store by the registry (adapter list × store list). */
export interface Adapter {
  /** The name in target labels, e.g. "Express". */
  readonly name: string;
  /** The `stack.framework` it serves. */
  readonly serves: StackDesign['framework'];
  /** The part of the target id naming the framework: `typescript-<idName>-<store>`. */
  readonly idName: string;
  readonly framework: HttpFramework;
  /** The adapter template, copied beside the shared runtime. */
  readonly adapter: StaticFile;
  /** How the generated README describes index.ts. */
  readonly wiringPurpose?: string;
  /** Whether JavaScript projects get it (types stripped); NestJS and Fastify's typed hooks are TypeScript-only. */
  readonly javascript: boolean;
  /** Said after the languages in the label, e.g. ", Express platform". */
  readonly labelDetail?: string;
}

export const ADAPTERS: readonly Adapter[] = [
  {
    name: 'Express',
    serves: 'express',
    idName: 'express',
    framework: EXPRESS,
    adapter: { path: 'express.ts', template: 'typescript/express/express.ts', role: 'middleware', purpose: 'Express middleware: hold, record, then send' },
    wiringPurpose: 'createIdempotency(): store, core and one middleware per route',
    javascript: true,
  },
  {
    name: 'Fastify',
    serves: 'fastify',
    idName: 'fastify',
    framework: FASTIFY,
    adapter: { path: 'fastify.ts', template: 'typescript/fastify/fastify.ts', role: 'middleware', purpose: 'Fastify route hooks: claim in preHandler, record in onSend, then send' },
    javascript: false,
  },
  {
    name: 'NestJS',
    serves: 'nestjs',
    idName: 'nestjs',
    framework: NESTJS,
    adapter: { path: 'nestjs.ts', template: 'typescript/nestjs/nestjs.ts', role: 'middleware', purpose: 'NestJS interceptor, @Idempotent() and the providers: claim after guards, record, then send' },
    javascript: false,
    labelDetail: ', Express or Fastify platform',
  },
  {
    name: 'Koa',
    serves: 'koa',
    idName: 'koa',
    framework: KOA,
    adapter: { path: 'koa.ts', template: 'typescript/koa/koa.ts', role: 'middleware', purpose: 'Koa middleware: claim, run the rest of the chain, record ctx.body, then let Koa send it' },
    javascript: true,
  },
  {
    name: 'Hono',
    serves: 'hono',
    idName: 'hono',
    framework: HONO,
    adapter: { path: 'hono.ts', template: 'typescript/hono/hono.ts', role: 'middleware', purpose: 'Hono middleware: claim, run the handler, record its Web Response, then hand it on' },
    javascript: true,
    labelDetail: ', Node or Web-standard runtime',
  },
  {
    name: 'Next.js',
    serves: 'nextjs',
    idName: 'nextjs',
    framework: NEXT,
    adapter: { path: 'next.ts', template: 'typescript/next/next.ts', role: 'middleware', purpose: 'Next.js wrappers: route handler, Pages API route and Server Action; claim, run, record, then answer' },
    wiringPurpose: 'createIdempotency(): store, core, and the Next.js wrappers by action name',
    javascript: true,
    labelDetail: ': route handlers, Pages API routes, Server Actions',
  },
  {
    // Projects without a web framework (workers, scripts): the plain idempotent(fn) wrapper over the same core.
    name: 'no web framework',
    serves: 'none',
    idName: 'plain',
    framework: PLAIN,
    adapter: { path: 'plain.ts', template: 'typescript/plain/plain.ts', role: 'middleware', purpose: 'idempotent(fn): run a function once per (scope, key), replay its stored JSON result; problemForError() for answering its errors over HTTP' },
    wiringPurpose: 'createIdempotency(): store, core, and idempotent(name, call, work) for every action',
    javascript: true,
    labelDetail: ': idempotent(fn) for workers, scripts, tRPC, GraphQL',
  },
];
