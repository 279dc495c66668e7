import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

/**
 * A small libSQL server for the store's remote path: the Hrana 2 protocol over HTTP (POST /v2/pipeline, JSON), the
 * one @libsql/client speaks to a `http://` URL, on a local database file through the same native libsql engine the
 * client's `file:` mode uses. Enough of the protocol for what the store sends (execute, batch with conditions,
 * sequence, stored SQL, close); each stream is a connection of its own, as on sqld. `hold` lets a test hold a
 * pipeline's execution or its answer until it says so, to play a slow network.
 */

interface Statement {
  readonly prepare: (sql: string) => {
    readonly reader: boolean;
    raw(toggle: boolean): { all(args: unknown[]): unknown[][] };
    all(args: unknown[]): unknown[];
    run(args: unknown[]): { changes: number; lastInsertRowid: number | bigint };
    columns(): Array<{ name: string; type: string | null }>;
  };
  exec(sql: string): void;
  close(): void;
}
// The engine @libsql/client opens `file:` URLs with (a dependency of the pinned client).
const Database = createRequire(import.meta.url)('libsql') as new (path: string) => Statement;

type Value = { type: 'null' } | { type: 'integer'; value: string } | { type: 'float'; value: number } | { type: 'text'; value: string } | { type: 'blob'; base64: string };
interface Stmt {
  sql?: string;
  sql_id?: number;
  args?: Value[];
  want_rows?: boolean;
}
type Cond = { type: 'ok'; step: number } | { type: 'error'; step: number } | { type: 'not'; cond: Cond } | { type: 'and'; conds: Cond[] } | { type: 'or'; conds: Cond[] };
type Request =
  | { type: 'execute'; stmt: Stmt }
  | { type: 'batch'; batch: { steps: Array<{ condition?: Cond | null; stmt: Stmt }> } }
  | { type: 'sequence'; sql?: string; sql_id?: number }
  | { type: 'store_sql'; sql_id: number; sql: string }
  | { type: 'close_sql'; sql_id: number }
  | { type: 'close' };

export interface PipelineHold {
  /** Run the pipeline only once this settles: a request the network delivers late. */
  readonly before?: Promise<unknown>;
  /** Answer only once this settles, after running it: an answer the network delivers late. */
  readonly after?: Promise<unknown>;
}

export interface HranaServer {
  readonly url: string;
  /** Decides the hold for each pipeline by its statements' SQL; none by default. */
  hold: (sqls: readonly string[]) => PipelineHold | undefined;
  /** Resolves once a pipeline whose SQL matches `pattern` has run (counting from the call). */
  ran(pattern: RegExp): Promise<void>;
  close(): Promise<void>;
}

export async function startHranaServer(file: string): Promise<HranaServer> {
  const streams = new Map<string, { db: Statement; sqls: Map<number, string> }>();
  const waiting: Array<{ pattern: RegExp; resolve: () => void }> = [];
  let next = 0;
  const state: Pick<HranaServer, 'hold'> = { hold: () => undefined };

  const run = (db: Statement, sqls: Map<number, string>, stmt: Stmt) => {
    const sql = stmt.sql ?? sqls.get(stmt.sql_id ?? -1);
    if (sql === undefined) throw Object.assign(new Error('SQL text not found'), { code: 'SQL_NOT_FOUND' });
    const args = (stmt.args ?? []).map(decode);
    const prepared = db.prepare(sql);
    if (prepared.reader) {
      const rows = prepared.raw(true).all(args);
      const changes = Number((db.prepare('SELECT changes() AS n').all([])[0] as { n: number }).n);
      return { cols: prepared.columns().map((c) => ({ name: c.name, decltype: c.type })), rows: rows.map((row) => row.map(encode)), affected_row_count: /^\s*(INSERT|UPDATE|DELETE)/i.test(sql) ? changes : 0, last_insert_rowid: null };
    }
    const { changes, lastInsertRowid } = prepared.run(args);
    return { cols: [], rows: [], affected_row_count: changes, last_insert_rowid: String(lastInsertRowid) };
  };

  const handle = (body: { baton?: string | null; requests: Request[] }) => {
    let baton = body.baton ?? undefined;
    let stream = baton ? streams.get(baton) : undefined;
    if (!stream) {
      baton = `stream-${next++}`;
      stream = { db: new Database(file), sqls: new Map() };
      streams.set(baton, stream);
    }
    const { db, sqls } = stream;
    let closed = false;
    const results = body.requests.map((request) => {
      try {
        switch (request.type) {
          case 'execute':
            return ok({ type: 'execute', result: run(db, sqls, request.stmt) });
          case 'batch': {
            const stepResults: unknown[] = [];
            const stepErrors: unknown[] = [];
            const holds = (cond: Cond): boolean => {
              switch (cond.type) {
                case 'ok':
                  return stepResults[cond.step] != null;
                case 'error':
                  return stepErrors[cond.step] != null;
                case 'not':
                  return !holds(cond.cond);
                case 'and':
                  return cond.conds.every(holds);
                case 'or':
                  return cond.conds.some(holds);
              }
            };
            for (const step of request.batch.steps) {
              if (step.condition && !holds(step.condition)) {
                stepResults.push(null);
                stepErrors.push(null);
                continue;
              }
              try {
                stepResults.push(run(db, sqls, step.stmt));
                stepErrors.push(null);
              } catch (error) {
                stepResults.push(null);
                stepErrors.push(problem(error));
              }
            }
            return ok({ type: 'batch', result: { step_results: stepResults, step_errors: stepErrors } });
          }
          case 'sequence':
            db.exec(request.sql ?? sqls.get(request.sql_id ?? -1) ?? '');
            return ok({ type: 'sequence' });
          case 'store_sql':
            sqls.set(request.sql_id, request.sql);
            return ok({ type: 'store_sql' });
          case 'close_sql':
            sqls.delete(request.sql_id);
            return ok({ type: 'close_sql' });
          case 'close':
            closed = true;
            return ok({ type: 'close' });
        }
      } catch (error) {
        return { type: 'error', error: problem(error) };
      }
    });
    if (closed) {
      db.close();
      streams.delete(baton!);
    }
    return { baton: closed ? null : baton, base_url: null, results };
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST' || req.url !== '/v2/pipeline') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { baton?: string | null; requests: Request[] };
        const sqls = body.requests.flatMap((request) => ('stmt' in request ? [request.stmt.sql ?? ''] : 'batch' in request ? request.batch.steps.map((step) => step.stmt.sql ?? '') : 'sql' in request ? [request.sql ?? ''] : []));
        const hold = state.hold(sqls) ?? {};
        if (hold.before) await hold.before;
        const answer = JSON.stringify(handle(body));
        for (const entry of waiting.splice(0)) {
          if (sqls.some((sql) => entry.pattern.test(sql))) entry.resolve();
          else waiting.push(entry);
        }
        if (hold.after) await hold.after;
        res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get hold() {
      return state.hold;
    },
    set hold(decide) {
      state.hold = decide;
    },
    ran: (pattern) => new Promise<void>((resolve) => waiting.push({ pattern, resolve })),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const stream of streams.values()) stream.db.close();
      streams.clear();
    },
  };
}

const ok = (response: unknown) => ({ type: 'ok', response });

function problem(error: unknown): { message: string; code: string } {
  const { message, code } = error as { message?: string; code?: string };
  return { message: message ?? String(error), code: code ?? 'UNKNOWN' };
}

function decode(value: Value): unknown {
  switch (value.type) {
    case 'null':
      return null;
    case 'integer':
      return Number(value.value);
    case 'float':
      return value.value;
    case 'text':
      return value.value;
    case 'blob':
      return Buffer.from(value.base64, 'base64');
  }
}

function encode(value: unknown): Value {
  if (value === null || value === undefined) return { type: 'null' };
  if (typeof value === 'bigint') return { type: 'integer', value: String(value) };
  if (typeof value === 'number') return Number.isInteger(value) ? { type: 'integer', value: String(value) } : { type: 'float', value };
  if (typeof value === 'string') return { type: 'text', value };
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return { type: 'blob', base64: Buffer.from(value as Uint8Array).toString('base64') };
  return { type: 'text', value: String(value) };
}
