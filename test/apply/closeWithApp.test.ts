import { describe, expect, it } from 'vitest';
import { importStyleFor, type ProjectImports } from '../../src/apply/importStyle.js';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import { parseSource } from '../../src/apply/sourceFile.js';
import { wireNestModule } from '../../src/apply/transforms/nestjsRoute.js';
import type { WiringTarget } from '../../src/apply/types.js';

const imports: ProjectImports = { aliases: [], defaultExtension: '.js' };
const fastify: WireSourceOptions = { framework: 'fastify', scaffoldDir: 'src/idempotency', imports, scaffoldModules: new Set(['index']), closeExported: true };
const FILE = 'src/routes/bookings.ts';
const target = (line: number, extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: 'createBooking', codeName: 'createBooking', trigger: 'http', method: 'POST', path: '/bookings', file: FILE, line, ...extra });

// The shape of fastify/demo's routes: an async plugin whose parameter is the encapsulated instance.
const plugin = `import type { FastifyPluginAsync } from 'fastify';

const bookings: FastifyPluginAsync = async (fastify) => {
  // Bookings are stored by the repository the app decorates the instance with.
  const { repository } = fastify;
  fastify.post('/bookings', async (request, reply) => {
    return reply.code(201).send(await repository.create(request.body));
  });
  fastify.post('/bookings/:id/cancel', async (request) => repository.cancel(request.params));
};

export default bookings;
`;

describe('Fastify: the plugin that registers a wired route closes the store with the app', () => {
  it('adds fastify.addHook(onClose, closeIdempotency) first in the plugin, imported beside idempotency; a second run changes nothing', () => {
    const out = wireSource(FILE, plugin, [target(6)], fastify);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { idempotency, closeIdempotency } from '../idempotency/instance.js';\n");
    expect(out.text).toContain("const bookings: FastifyPluginAsync = async (fastify) => {\n  fastify.addHook('onClose', closeIdempotency);\n  // Bookings are stored by the repository the app decorates the instance with.\n  const { repository } = fastify;\n  fastify.post('/bookings', idempotency.createBooking, async");
    expect(out.edits.map((e) => e.summary)).toEqual(['adds the idempotency.createBooking hooks to POST /bookings', "closes the store's pool with the app: fastify.addHook('onClose', closeIdempotency)"]);
    const again = wireSource(FILE, out.text, [target(6)], { ...fastify, anyLine: true });
    expect(again.text).toBe(out.text);
    expect(again.edits).toEqual([]);
  });

  it('adds one hook for two wired routes of the same plugin', () => {
    const out = wireSource(FILE, plugin, [target(6), target(9, { action: 'cancelBooking', codeName: 'cancelBooking', path: '/bookings/:id/cancel' })], fastify);
    expect(out.text.match(/addHook\('onClose', closeIdempotency\)/g)).toHaveLength(1);
    expect(out.text).toContain("fastify.post('/bookings/:id/cancel', idempotency.cancelBooking, async");
  });

  it('names the instance as the plugin does (a function declaration taking `app`), in the file\'s quotes and semicolon style', () => {
    const text = 'import type { FastifyInstance } from "fastify"\n\nexport async function routes(app: FastifyInstance) {\n  app.post("/bookings", async () => ({ ok: true }))\n}\n';
    const out = wireSource(FILE, text, [target(4)], fastify);
    expect(out.text).toContain('import { idempotency, closeIdempotency } from "../idempotency/instance.js"\n');
    expect(out.text).toContain('export async function routes(app: FastifyInstance) {\n  app.addHook("onClose", closeIdempotency)\n  app.post("/bookings", idempotency.createBooking, async');
    expect(wireSource(FILE, out.text, [target(4)], { ...fastify, anyLine: true }).text).toBe(out.text);
  });

  it('hooks a module-level instance just before its first wired route', () => {
    const text = "import Fastify from 'fastify';\n\nexport const app = Fastify();\n\n// One booking per key.\napp.post('/bookings', async () => ({ ok: true }));\n";
    const out = wireSource(FILE, text, [target(6)], fastify);
    expect(out.text).toContain("export const app = Fastify();\napp.addHook('onClose', closeIdempotency);\n\n// One booking per key.\napp.post('/bookings', idempotency.createBooking, async () => ({ ok: true }));\n");
    expect(wireSource(FILE, out.text, [target(8)], { ...fastify, anyLine: true }).text).toBe(out.text);
  });

  it('hooks an instance a factory makes itself just before the wired route, where the name is that instance', () => {
    const text = "import Fastify from 'fastify';\n\nexport function buildApp() {\n  const app = Fastify();\n  app.post('/bookings', async () => ({ ok: true }));\n  return app;\n}\n";
    const out = wireSource(FILE, text, [target(5)], fastify);
    expect(out.text).toContain("  const app = Fastify();\n  app.addHook('onClose', closeIdempotency);\n  app.post('/bookings', idempotency.createBooking, async () => ({ ok: true }));\n  return app;\n");
    expect(wireSource(FILE, out.text, [target(7)], { ...fastify, anyLine: true }).text).toBe(out.text);
  });

  it('leaves a step for a route an arrow returns, where no statement can hold the hook', () => {
    const text = "import type { FastifyInstance } from 'fastify';\n\nexport const routes = (app: FastifyInstance) => app.post('/bookings', async () => ({ ok: true }));\n";
    const out = wireSource(FILE, text, [target(3)], fastify);
    expect(out.text).not.toContain("addHook('onClose'");
    expect(out.manual.map((m) => m.reason)).toContainEqual(expect.stringContaining("app.addHook('onClose', closeIdempotency)"));
  });

  it('adds no hook when the instance module was written without closeIdempotency() (an older apply)', () => {
    const out = wireSource(FILE, plugin, [target(6)], { ...fastify, closeExported: false });
    expect(out.text).not.toContain('closeIdempotency');
    expect(out.text).toContain("fastify.post('/bookings', idempotency.createBooking, async");
  });

  it('leaves a step when the file has its own closeIdempotency', () => {
    const text = plugin.replace('export default bookings;', 'export default bookings;\nexport function closeIdempotency(): void {}');
    const out = wireSource(FILE, text, [target(6)], fastify);
    expect(out.text).not.toContain("addHook('onClose'");
    expect(out.manual.map((m) => m.reason)).toContainEqual(expect.stringContaining('the file already has its own binding named "closeIdempotency"'));
  });
});

const MODULE = 'src/app.module.ts';
const wireModule = (text: string, closeExported = true) => {
  const style = importStyleFor(MODULE, text, 'src/idempotency', imports);
  const sf = parseSource(MODULE, text, style);
  const outcome = wireNestModule(sf, 'AppModule', 'createBooking', MODULE, { style, anyLine: false, scaffoldModules: new Set(['index', 'instance']), closeExported });
  return { text: sf.getFullText(), ...outcome };
};

describe('NestJS: the root module closes the store on application shutdown', () => {
  const module = `import { Module } from '@nestjs/common';
import { BookingsController } from './bookings.controller';
import { BookingsService } from './bookings.service';

@Module({
  controllers: [BookingsController],
  providers: [BookingsService],
})
export class AppModule {}
`;

  it('adds an onApplicationShutdown value provider beside the interceptor registration; a second run changes nothing', () => {
    const out = wireModule(module);
    expect(out.text).toContain("import { idempotency, closeIdempotency } from './idempotency/instance';\n");
    expect(out.text).toContain("providers: [BookingsService, ...idempotencyProviders(idempotency), { provide: 'closeIdempotency', useValue: { onApplicationShutdown: closeIdempotency } }],");
    expect(out.edits.map((e) => e.summary)).toEqual(['registers the idempotency interceptor in AppModule (providers)', "closes the store's pool on application shutdown (providers: onApplicationShutdown → closeIdempotency)"]);
    const again = wireModule(out.text);
    expect(again.text).toBe(out.text);
    expect(again.edits).toEqual([]);
  });

  it('adds it to a module an earlier apply wired without it', () => {
    const earlier = module
      .replace("import { BookingsService } from './bookings.service';", "import { BookingsService } from './bookings.service';\nimport { idempotencyProviders } from './idempotency';\nimport { idempotency } from './idempotency/instance';")
      .replace('providers: [BookingsService],', 'providers: [BookingsService, ...idempotencyProviders(idempotency)],');
    const out = wireModule(earlier);
    expect(out.text).toContain("import { idempotency, closeIdempotency } from './idempotency/instance';\n");
    expect(out.text).toContain("...idempotencyProviders(idempotency), { provide: 'closeIdempotency', useValue: { onApplicationShutdown: closeIdempotency } }]");
    expect(out.edits).toHaveLength(1);
    expect(wireModule(out.text).text).toBe(out.text);
  });

  it('writes both into a module without providers, keeping its trailing comma', () => {
    const out = wireModule(module.replace('  providers: [BookingsService],\n', ''));
    expect(out.text).toContain("  controllers: [BookingsController],\n  providers: [...idempotencyProviders(idempotency), { provide: 'closeIdempotency', useValue: { onApplicationShutdown: closeIdempotency } }],\n})");
    expect(wireModule(out.text).text).toBe(out.text);
  });

  it('adds no close provider when the instance module has no closeIdempotency()', () => {
    const out = wireModule(module, false);
    expect(out.text).toContain('providers: [BookingsService, ...idempotencyProviders(idempotency)],');
    expect(out.text).not.toContain('closeIdempotency');
  });
});
