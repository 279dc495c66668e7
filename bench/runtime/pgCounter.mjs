// A loopback TCP proxy in front of PostgreSQL that counts what the app asks of the database, from the protocol
// itself (pg_stat_statements needs shared_preload_libraries, which the shared server here does not load, and
// pg_stat_database is shared with every other client of the server). Counts: round trips (waits for the server: a
// Sync or simple Query sent while no earlier one awaits its ReadyForQuery; pipelined statements share one),
// statements (Bind + simple Query), commits (COMMIT statements plus writes sent outside an explicit transaction).
// Used only in the short counting pass, never while throughput is measured: forwarding costs CPU.
import { Buffer } from 'node:buffer';
import net from 'node:net';

const SSL_REQUEST = 80877103;

export async function startCounter(target) {
  const counts = { roundTrips: 0, statements: 0, commits: 0 };
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    const statements = new Map();
    let pending = Buffer.alloc(0);
    let startup = true;
    let inTransaction = false;
    let unnamed = '';
    // Syncs and Queries sent whose ReadyForQuery (backend 'Z') has not come back yet.
    let awaiting = 0;
    let answers = Buffer.alloc(0);
    let sslAnswer = 0;
    const sent = () => {
      if (awaiting === 0) counts.roundTrips++;
      awaiting++;
    };
    const run = (sql) => {
      counts.statements++;
      const verb = sql.trimStart().slice(0, 12).toUpperCase();
      if (verb.startsWith('BEGIN')) inTransaction = true;
      else if (verb.startsWith('COMMIT')) {
        inTransaction = false;
        counts.commits++;
      } else if (verb.startsWith('ROLLBACK')) inTransaction = false;
      else if (!inTransaction && /^(INSERT|UPDATE|DELETE|WITH)/.test(verb)) counts.commits++;
    };
    client.on('data', (chunk) => {
      upstream.write(chunk);
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let offset = 0;
      for (;;) {
        if (startup) {
          if (pending.length - offset < 8) break;
          const length = pending.readInt32BE(offset);
          if (pending.length - offset < length) break;
          if (pending.readInt32BE(offset + 4) === SSL_REQUEST) sslAnswer++;
          else startup = false;
          offset += length;
          continue;
        }
        if (pending.length - offset < 5) break;
        const type = String.fromCharCode(pending[offset]);
        const length = pending.readInt32BE(offset + 1);
        if (pending.length - offset < 1 + length) break;
        const body = pending.subarray(offset + 5, offset + 1 + length);
        const nul = (from) => body.indexOf(0, from);
        if (type === 'Q') {
          sent();
          run(body.toString('utf8', 0, nul(0)));
        } else if (type === 'S') sent();
        else if (type === 'P') {
          const name = body.toString('utf8', 0, nul(0));
          const text = body.toString('utf8', nul(0) + 1, nul(nul(0) + 1));
          if (name) statements.set(name, text);
          else unnamed = text;
        } else if (type === 'B') {
          const portalEnd = nul(0);
          const name = body.toString('utf8', portalEnd + 1, nul(portalEnd + 1));
          run(name ? (statements.get(name) ?? '') : unnamed);
        }
        offset += 1 + length;
      }
      pending = Buffer.from(pending.subarray(offset));
    });
    upstream.on('data', (chunk) => {
      client.write(chunk);
      answers = answers.length ? Buffer.concat([answers, chunk]) : chunk;
      let offset = 0;
      // The one-byte answer to an SSLRequest is untyped.
      for (; sslAnswer > 0 && offset < answers.length; sslAnswer--) offset++;
      while (answers.length - offset >= 5) {
        const length = answers.readInt32BE(offset + 1);
        if (answers.length - offset < 1 + length) break;
        if (answers[offset] === 0x5a) awaiting = Math.max(0, awaiting - 1);
        offset += 1 + length;
      }
      answers = Buffer.from(answers.subarray(offset));
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    take() {
      const taken = { ...counts };
      counts.roundTrips = counts.statements = counts.commits = 0;
      return taken;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
