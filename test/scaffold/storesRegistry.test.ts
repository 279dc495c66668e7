import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATABASES } from '../../src/config/schema.js';
import { buildScaffoldView } from '../../src/scaffold/scaffoldView.js';
import { STORE_MODULES, storeFor } from '../../src/scaffold/stores/index.js';
import { modelFor, ROOT } from './generateInto.js';

describe('store modules', () => {
  it('each database is served by at most one store, and the ones we generate for by exactly one', () => {
    for (const database of DATABASES) {
      const serving = STORE_MODULES.filter((store) => store.serves.includes(database));
      expect(serving.length, database).toBeLessThanOrEqual(1);
    }
    expect(storeFor('mysql')?.id).toBe('mysql');
    expect(storeFor('mariadb')?.id).toBe('mysql');
    expect(storeFor('sqlite')?.id).toBe('sqlite');
    expect(storeFor('libsql')?.id).toBe('libsql');
    expect(storeFor('redis')?.id).toBe('redis');
    expect(storeFor('postgres')?.id).toBe('postgres');
    expect(storeFor('dynamodb')?.id).toBe('dynamodb');
    expect(storeFor('mongodb')).toBeUndefined();
  });

  it.each(STORE_MODULES.map((store) => [store.id, store] as const))('%s: its templates exist and its DDL keeps the spec constraints', async (id, store) => {
    for (const file of store.files) expect(existsSync(path.join(ROOT, 'templates/scaffold', file.template)), file.template).toBe(true);
    // Every store is proven by a contract-suite file of its own.
    expect(existsSync(path.join(ROOT, 'test/scaffold/storeContract', `${id}.test.ts`))).toBe(true);
    const view = buildScaffoldView(await modelFor('express-stripe-payments'));
    if (!store.migration) {
      expect(store.transactional).toBe(false);
      return;
    }
    const ddl = store.migration.render(view);
    if (store.id === 'dynamodb') {
      // No SQL: uniqueness is the conditional put the table definition's header states.
      expect(store.transactional).toBe(false);
      expect(ddl).toContain('attribute_not_exists(pk)');
      return;
    }
    expect(ddl).toContain('PRIMARY KEY (scope, key)'.replace('key)', store.id === 'mysql' ? '`key`)' : 'key)'));
    expect(ddl).toMatch(/CHECK \(status IN \('PROCESSING', 'COMPLETED', 'FAILED'\)\)/);
  });
});
