import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/config/schema.js';
import { STORE_FACTS } from '../../src/model/storeFacts.js';
import { storeFor } from '../../src/scaffold/stores/index.js';
import { rawFixture } from '../helpers/fixtures.js';
import { renderConfig } from '../helpers/generateInto.js';

/**
 * Issue #15/#20: every claim the document makes about the store must be true of the store code generated with it.
 * Each store-specific name the document may use (a statement, a session setting, a client option) is tied to what
 * the generated store files must then contain; a document that names one its store code lacks fails.
 */
const NAMES: ReadonlyArray<{ doc: RegExp; code: RegExp }> = [
  { doc: /ON CONFLICT/, code: /ON CONFLICT/ },
  { doc: /\bRETURNING\b/, code: /\bRETURNING\b/ },
  { doc: /\bstatement_timeout\b/, code: /\bstatement_timeout\b/ },
  { doc: /\block_timeout\b/, code: /\block_timeout\b/ },
  { doc: /\bnow\(\)/, code: /\bnow\(\)/ },
  { doc: /ON DUPLICATE KEY UPDATE/, code: /ON DUPLICATE KEY UPDATE/ },
  { doc: /\bFOR UPDATE\b/, code: /\bFOR UPDATE\b/ },
  { doc: /\binnodb_lock_wait_timeout\b/, code: /\binnodb_lock_wait_timeout\b/ },
  { doc: /\bUTC_TIMESTAMP\b/, code: /\bUTC_TIMESTAMP\b/ },
  { doc: /\bBEGIN IMMEDIATE\b/, code: /\bBEGIN IMMEDIATE\b/ },
  { doc: /\bbusy_timeout\b/, code: /\bbusy_timeout\b/ },
  { doc: /\bjulianday\b/, code: /\bjulianday\b/ },
  { doc: /\bEVALSHA\b/, code: /\bEVALSHA\b/ },
  { doc: /SET … PX/, code: /'SET', KEYS\[2\], ARGV\[1\], 'PX'/ },
  { doc: /\bPEXPIRE\b/, code: /\bPEXPIRE\b/ },
  { doc: /\bcommandTimeout\b/, code: /\bcommandTimeout\b/ },
  { doc: /\bPutItem\b/, code: /\bPutCommand\b/ },
  { doc: /\bUpdateItem\b/, code: /\bUpdateCommand\b/ },
  { doc: /\battribute_not_exists\(pk\)/, code: /attribute_not_exists\(pk\)/ },
  { doc: /\bReturnValuesOnConditionCheckFailure\b/, code: /\bReturnValuesOnConditionCheckFailure\b/ },
  { doc: /\bconnectionTimeout\b/, code: /\bconnectionTimeout\b/ },
];

const STORES: readonly Database[] = ['postgres', 'mysql', 'mariadb', 'sqlite', 'libsql', 'redis', 'dynamodb'];

function onStore(database: Database): Record<string, unknown> {
  const raw = structuredClone(rawFixture('express-stripe-payments'));
  (raw.stack as Record<string, unknown>).database = database;
  return raw;
}

describe.each(STORES)('the document for a %s design', (database) => {
  it('names only statements and settings its generated store code uses', { timeout: 120_000 }, async () => {
    const { text, plan, model } = await renderConfig(onStore(database), { format: 'md' });
    // The prose as a reader sees it; code blocks are excerpts of generated files (test/docCode.test.ts checks those).
    const doc = text.replace(/^(`{3,})[a-z0-9+-]*\n[\s\S]*?\n\1$/gm, '').replace(/\\([^\s])/g, '$1');
    const store = storeFor(database);
    expect(store, `no store module for ${database}`).toBeDefined();
    const dir = model.scaffold?.dir ?? 'src/idempotency';
    const storeFiles = store!.files.filter((file) => file.role === 'store').map((file) => `${dir}/${file.path}`);
    const code = plan.filter((item) => storeFiles.includes(item.path)).map((item) => item.contents);
    expect(code, `generated ${storeFiles.join(', ')}`).toHaveLength(storeFiles.length);
    const source = code.join('\n');

    // The facts table itself is true of the code...
    for (const name of STORE_FACTS[database].codeNames) expect(source, `${database} store code lacks ${name}`).toContain(name);
    // ...and so is every store-specific name in the document.
    for (const { doc: named, code: used } of NAMES) {
      if (named.test(doc)) expect(source, `the ${database} document names ${named.source}`).toMatch(used);
    }
    // The claim the overview and "Atomic claim" row describe is the one this store's facts give.
    expect(doc).toContain(STORE_FACTS[database].claimPrimitive);
    expect(doc).toContain(model.detection.summary);
    if (database !== 'postgres') expect(doc).not.toMatch(/\bstatement_timeout\b/);
    // libSQL's claim is an INSERT … ON CONFLICT too (inside its write batch); no other store's is.
    if (database !== 'postgres' && database !== 'libsql') expect(doc).not.toMatch(/ON CONFLICT \(scope, key\)/);
  });
});
