import { describeFaultSuite, type ScenarioId } from '../fault/faultSuite.js';
import { profileCase } from './profileCases.js';

/**
 * The fault suite (test/fault) on Express + PostgreSQL under the project profiles of profiles.test.ts, each scaffold
 * generated for its profile, built as that project builds it and loaded as it loads it (require() in CommonJS). The
 * reference profile (NodeNext ESM) runs it in test/fault/express.test.ts with the full repetitions; here the two
 * CommonJS profiles most unlike it run every scenario, the others the scenarios a profile is most likely to break.
 * NestJS runs every scenario under its classic CommonJS profile, with its app compiled by that profile's tsconfig.
 */
const SUBSET: readonly ScenarioId[] = ['sigkill', 'lease-lapse', 'delayed-duplicates', 'store-refused'];

await describeFaultSuite('express', 'postgres', { profile: profileCase('ts-cjs-no-interop-es2019-jest') });
await describeFaultSuite('express', 'postgres', { profile: profileCase('js-cjs-mocha') });
await describeFaultSuite('express', 'postgres', { profile: profileCase('ts-bundler-vitest'), scenarios: SUBSET });
await describeFaultSuite('express', 'postgres', { profile: profileCase('ts-cjs-interop-es2019-mocha'), scenarios: SUBSET });
await describeFaultSuite('express', 'postgres', { profile: profileCase('js-esm-node-test'), scenarios: SUBSET });
// NestJS under `nest new`'s tsconfig (CommonJS, no esModuleInterop, decorators with emitted metadata): the app itself
// (fixtures/profiles/nestjs-cjs-app) is compiled with the scaffold by that tsconfig and started as the real Nest app.
await describeFaultSuite('nestjs', 'postgres', { profile: profileCase('nestjs-classic-cjs-jest') });
