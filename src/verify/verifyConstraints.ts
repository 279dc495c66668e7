import { blocksUnder, type LocatedBlock } from './outline.js';
import { findDeliverable } from './verifySections.js';
import type { Finding, OutlineBlock } from './types.js';

type Table = Extract<OutlineBlock, { kind: 'table' }>;

const DURATION = /\b\d+(?:[.,]\d+)?\s*(?:ms|milliseconds?|s|sec|seconds?|min|minutes?|h|hours?|d|days?)\b/i;
const STACK_TERMS = ['express', 'fastify', 'nestjs', 'koa', 'hono', 'next.js', 'postgresql', 'mysql', 'mariadb', 'sqlite', 'libsql', 'mongodb', 'dynamodb', 'redis', 'kafka', 'rabbitmq', 'bullmq', 'sqs', 'nats', 'node.js', 'typescript', 'javascript'];

/** The spec's seven testable constraints, checked on what the document actually says. */
export function verifyConstraints(located: readonly LocatedBlock[], documentLabel: string): Finding[] {
  const findings: Finding[] = [];
  const add = (file: string | undefined, message: string) => findings.push({ file: file ?? documentLabel, message });

  // The action map names the actions every other check is about.
  const mapIndex = findDeliverable(located, 'action-map');
  const mapItem = mapIndex === -1 ? undefined : blocksUnder(located, mapIndex).find((l) => l.block.kind === 'table');
  const map = mapItem?.block as Table | undefined;
  const actions = map ? map.rows.map((row) => row[0] ?? '').filter((name) => name !== '') : [];
  if (!map || actions.length === 0) add(mapItem?.file, 'constraint "recovery path for every action": the action map table lists no actions');

  // 1. A recovery path for every action, and never just "retry".
  if (map) {
    const column = columnOf(map, /recovery/i);
    if (column === -1) add(mapItem?.file, 'constraint "recovery path for every action": the action map has no "Recovery path" column');
    else {
      for (const row of map.rows) {
        const recovery = (row[column] ?? '').trim();
        if (recovery === '' || /^(just\s+)?retry\.?$/i.test(recovery)) add(mapItem?.file, `constraint "recovery path for every action": ${row[0] ?? 'an action'} has ${recovery === '' ? 'no recovery path' : `only "${recovery}" as its recovery path`}`);
      }
    }
  }

  // 2. The store DDL has a PRIMARY KEY and a CHECK constraint.
  const ddlIndex = findDeliverable(located, 'store-ddl');
  const ddl = ddlIndex === -1 ? undefined : blocksUnder(located, ddlIndex).find((l) => l.block.kind === 'code');
  // SQL comments may mention "primary key" in prose; only statements count.
  const ddlText = ddl?.block.kind === 'code' ? ddl.block.text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/--.*$/gm, '') : '';
  if (!ddl) add(undefined, 'constraint "store DDL with PRIMARY KEY and CHECK": no DDL code block under the store DDL heading');
  else if (/create\s+table/i.test(ddlText)) {
    if (!/primary\s+key/i.test(ddlText)) add(ddl.file, 'constraint "store DDL with PRIMARY KEY and CHECK": the idempotency store DDL has no PRIMARY KEY');
    if (!/\bcheck\s*\(/i.test(ddlText)) add(ddl.file, 'constraint "store DDL with PRIMARY KEY and CHECK": the idempotency store DDL has no CHECK constraint');
    // A Redis claim script (redis.call) runs atomically on the server: it is the store's uniqueness guarantee.
  } else if (!/unique|attribute_not_exists|\bNX\b|primary\s+key|redis\.call\(/i.test(ddlText)) {
    add(ddl.file, 'constraint "store DDL with PRIMARY KEY and CHECK": the store definition shows no uniqueness guarantee for keys');
  }

  // 3. Significant fields listed per action.
  const fingerprintTable = tablesIn(located, 3).find((t) => columnOf(t.table, /hash|significant|field/i) !== -1);
  if (!fingerprintTable) add(fileOf(located, 3), 'constraint "fingerprint fields per action": section 3 has no table of hashed fields');
  else {
    const column = columnOf(fingerprintTable.table, /hash|significant|field/i);
    for (const action of actions) {
      const row = fingerprintTable.table.rows.find((r) => r[0] === action);
      if (!row || (row[column] ?? '').trim() === '') add(fingerprintTable.file, `constraint "fingerprint fields per action": no significant fields listed for ${action}`);
    }
  }

  // 4. Lock timeout stated with its justification.
  const leaseTable = tablesIn(located, 4).find((t) => columnOf(t.table, /lease|lock timeout|timeout/i) !== -1 && columnOf(t.table, /justification|why/i) !== -1);
  if (!leaseTable) add(fileOf(located, 4), 'constraint "lock timeout with justification": section 4 has no lock timeout table with a justification column');
  else {
    const lease = columnOf(leaseTable.table, /lease|lock timeout|timeout/i);
    const why = columnOf(leaseTable.table, /justification|why/i);
    for (const action of actions) {
      const row = leaseTable.table.rows.find((r) => r[0] === action);
      if (!row || !DURATION.test(row[lease] ?? '')) add(leaseTable.file, `constraint "lock timeout with justification": no lock timeout value for ${action}`);
      else if (wordCount(row[why] ?? '') < 4) add(leaseTable.file, `constraint "lock timeout with justification": the lock timeout for ${action} has no justification`);
    }
  }

  // 5. Key retention stated with its justification.
  const retentionIndex = located.findIndex((l) => l.section === 5 && l.block.kind === 'heading' && /retention|expir/i.test(l.block.text));
  const retentionText = retentionIndex === -1 ? '' : blocksUnder(located, retentionIndex).map((l) => (l.block.kind === 'text' ? l.block.text : '')).join(' ');
  if (!DURATION.test(retentionText)) add(fileOf(located, 5), 'constraint "retention with justification": section 5 states no key retention period');
  else if (wordCount(retentionText) < 12) add(fileOf(located, 5), 'constraint "retention with justification": the retention period has no justification');

  // 6. An anti-pattern relevant to the stack.
  const antiPatterns = tablesIn(located, 9).filter((t) => t.table.rows.length > 0);
  if (antiPatterns.length === 0) add(fileOf(located, 9), 'constraint "anti-pattern relevant to the stack": section 9 lists no anti-patterns');
  else {
    const stack = stackTerms(located);
    const text = antiPatterns.map((t) => blockText(t.table)).join(' ').toLowerCase();
    if (stack.length > 0 && !stack.some((term) => text.includes(term))) {
      add(antiPatterns[0]!.file, `constraint "anti-pattern relevant to the stack": no anti-pattern mentions the stack (${stack.join(', ')})`);
    }
  }

  // 7. A concurrent-duplicate test case with its expected behaviour.
  const concurrent = tablesIn(located, 11).some((t) => t.table.rows.some((row) => /concurren|parallel|simultaneous/i.test(row[0] ?? '') && row.slice(1).some((cell) => wordCount(cell) >= 3)));
  if (!concurrent) add(fileOf(located, 11), 'constraint "concurrent duplicate test case": section 11 has no concurrent-duplicate scenario with an expected outcome');
  return findings;
}

function columnOf(table: Table, pattern: RegExp): number {
  return table.header.findIndex((h) => pattern.test(h));
}

function tablesIn(located: readonly LocatedBlock[], section: number): Array<{ table: Table; file: string }> {
  return located.filter((l) => l.section === section && l.block.kind === 'table').map((l) => ({ table: l.block as Table, file: l.file }));
}

function fileOf(located: readonly LocatedBlock[], section: number): string | undefined {
  return located.find((l) => l.section === section)?.file;
}

const wordCount = (text: string) => text.split(/\s+/).filter((w) => /\w/.test(w)).length;

function blockText(block: OutlineBlock): string {
  if (block.kind === 'text' || block.kind === 'heading') return block.text;
  if (block.kind === 'table') return [block.header, ...block.rows].flat().join(' ');
  return '';
}

/** The stack as the overview states it ("Stack" row), in known technology names. */
function stackTerms(located: readonly LocatedBlock[]): string[] {
  for (const item of located) {
    if (item.block.kind !== 'table') continue;
    const row = item.block.rows.find((r) => /^stack$/i.test((r[0] ?? '').trim()));
    if (row) {
      const text = row.slice(1).join(' ').toLowerCase();
      return STACK_TERMS.filter((term) => text.includes(term));
    }
  }
  return [];
}
