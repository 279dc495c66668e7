import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readNestApplications } from '../../src/apply/nestApplications.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A throwaway project holding `files`, read as apply reads it. */
async function applicationsOf(files: Record<string, string>, aliases: Array<{ prefix: string; dir: string }> = []) {
  dir = await mkdtemp(path.join(tmpdir(), 'nest-apps-'));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  return readNestApplications(dir, Object.keys(files), aliases, 'src/idempotency');
}

const payments = {
  'src/payments/main.ts': "import { NestFactory } from '@nestjs/core';\nimport { PaymentsModule } from '@payments/payments.module';\nNestFactory.createMicroservice<MicroserviceOptions>(PaymentsModule, { transport: Transport.KAFKA });\n",
  'src/payments/payments.module.ts': "import { Module, forwardRef } from '@nestjs/common';\nimport { SharedModule } from 'src/shared/shared.module';\nimport { PaymentConsumer } from './payment.consumer';\n\n@Module({\n  imports: [forwardRef(() => SharedModule), TypeOrmModule.forRoot({})],\n  providers: [{ provide: CONSUMER, useClass: PaymentConsumer }],\n})\nexport class PaymentsModule {}\n",
  'src/payments/payment.consumer.ts': "export class PaymentConsumer {\n  async handle(message: unknown) {\n    return message;\n  }\n}\n",
  'src/shared/shared.module.ts': "import { Module } from '@nestjs/common';\nimport { AuditService } from './audit.service';\n\n@Module({ providers: [AuditService], exports: [AuditService] })\nexport class SharedModule {}\n",
  'src/shared/audit.service.ts': 'export class AuditService {\n  record() {}\n}\n',
  'src/reports/main.ts': "import { NestFactory } from '@nestjs/core';\nimport { ReportsModule } from './reports.module';\nNestFactory.createApplicationContext(ReportsModule);\n",
  'src/reports/reports.module.ts': "import { Module } from '@nestjs/common';\nimport { SharedModule } from '../shared/shared.module';\n\n@Module({ imports: [SharedModule] })\nexport class ReportsModule {}\n",
};

describe('readNestApplications', () => {
  it('finds createMicroservice and createApplicationContext roots and places a class through aliases, root-relative imports, forwardRef and useClass', async () => {
    const apps = await applicationsOf(payments, [{ prefix: '@payments/', dir: 'src/payments' }]);
    expect(apps.roots).toEqual([
      { file: 'src/payments/payments.module.ts', name: 'PaymentsModule' },
      { file: 'src/reports/reports.module.ts', name: 'ReportsModule' },
    ]);
    // A line inside PaymentConsumer's method, listed through `useClass`.
    expect(await apps.rootsOf('src/payments/payment.consumer.ts', 3)).toEqual([apps.roots[0]]);
    // SharedModule is imported by both roots (one through forwardRef), so its provider belongs to both applications.
    expect(await apps.rootsOf('src/shared/audit.service.ts', 2)).toEqual(apps.roots);
  });

  it('reads lists built from a condition and a spread const of the module file (gitroomhq/postiz-app ApiModule)', async () => {
    const apps = await applicationsOf({
      'src/main.ts': "import { NestFactory } from '@nestjs/core';\nimport { ApiModule } from './api.module';\nNestFactory.create(ApiModule);\n",
      'src/api.module.ts': "import { Module } from '@nestjs/common';\nimport { RootController } from './root.controller';\nimport { BillingController } from './billing.controller';\n\nconst authenticatedController = [BillingController];\n@Module({\n  controllers: process.env.MCP_ONLY ? [RootController] : [RootController, ...authenticatedController],\n})\nexport class ApiModule {}\n",
      'src/root.controller.ts': 'export class RootController {}\n',
      'src/billing.controller.ts': 'export class BillingController {\n  subscribe() {}\n}\n',
    });
    expect(await apps.rootsOf('src/billing.controller.ts', 2)).toEqual([{ file: 'src/api.module.ts', name: 'ApiModule' }]);
  });

  it('places nothing it cannot read: a class no module lists, a file without a class', async () => {
    const apps = await applicationsOf({ ...payments, 'src/payments/loose.ts': 'export class Loose {}\n', 'src/payments/handler.ts': 'export const handle = () => 1;\n' });
    expect(await apps.rootsOf('src/payments/loose.ts', 1)).toEqual([]);
    expect(await apps.rootsOf('src/payments/handler.ts', 1)).toEqual([]);
  });

  it('tells which root imports another, and counts test files only when nothing else boots a module', async () => {
    const apps = await applicationsOf({
      ...payments,
      'src/reports/reports.module.ts': "import { Module } from '@nestjs/common';\nimport { PaymentsModule } from '../payments/payments.module';\n\n@Module({ imports: [PaymentsModule] })\nexport class ReportsModule {}\n",
      'test/app.e2e-spec.ts': "import { NestFactory } from '@nestjs/core';\nimport { TestModule } from './test.module';\nNestFactory.create(TestModule);\n",
      'test/test.module.ts': "import { Module } from '@nestjs/common';\n\n@Module({})\nexport class TestModule {}\n",
    });
    const [paymentsRoot, reportsRoot] = apps.roots;
    expect(apps.roots).toHaveLength(2);
    expect(apps.imports(reportsRoot!, paymentsRoot!)).toBe(true);
    expect(apps.imports(paymentsRoot!, reportsRoot!)).toBe(false);
  });

  it('counts a module only a test boots when nothing else boots one, and never the scaffold\'s own test', async () => {
    const apps = await applicationsOf({
      'test/app.e2e-spec.ts': "import { NestFactory } from '@nestjs/core';\nimport { AppModule } from '../src/app.module';\nNestFactory.create(AppModule);\n",
      'src/app.module.ts': "import { Module } from '@nestjs/common';\n\n@Module({})\nexport class AppModule {}\n",
      'src/idempotency/idempotency.test.ts': "import { NestFactory } from '@nestjs/core';\n\n@Module({})\nclass TestModule {}\nNestFactory.create(TestModule);\n",
    });
    expect(apps.roots).toEqual([{ file: 'src/app.module.ts', name: 'AppModule' }]);
  });
});
