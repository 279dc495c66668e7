import { createHash } from 'node:crypto';
import { PgMessageReader } from './pgMessages.js';

/**
 * What the fault proxy needs to know about one connection's protocol: which statements the client's bytes carry
 * (to cut on them) and which requests the server's bytes finish answering (to cut after a commit, and to know when
 * the server has answered everything it was given). A store without a recognised protocol still gets the TCP-level
 * faults (refuse, stall, delay) through `opaqueWire`.
 */
export interface WireStatement {
  /** Offset of the statement's first byte in the chunk it ended in (negative when it began in an earlier chunk). */
  readonly start: number;
  /** The SQL, the Redis command (a script's text for EVAL/EVALSHA), or the DynamoDB operation and its JSON body. */
  readonly text: string;
  /** Ordinal (from 1) of the request that carries it on this connection. */
  readonly request: number;
}

export interface WireAnswer {
  /** Ordinal of the request this completes. */
  readonly request: number;
  /** No transaction is open once this answer was sent: whatever the request wrote is committed (or rolled back). */
  readonly idle: boolean;
}

export interface WireSession {
  /** Client → server bytes: the statements they carry and how many requests (each expecting one answer) end in them. */
  fromClient(chunk: Buffer): { statements: WireStatement[]; requests: number };
  /** Server → client bytes: the answers that end in them, in order. */
  fromServer(chunk: Buffer): WireAnswer[];
}

export type Wire = () => WireSession;

/** No recognition: refuse, stall and delay still work; statement cuts and quiet() do not apply. */
export const opaqueWire: Wire = () => ({ fromClient: () => ({ statements: [], requests: 0 }), fromServer: () => [] });

/** PostgreSQL v3: simple Query and extended Parse/Bind (by statement name); one answer (ReadyForQuery) per Sync/Query. */
export const postgresWire: Wire = () => {
  const front = new PgMessageReader('frontend');
  const back = new PgMessageReader('backend');
  front.onSslRequest = () => (back.skipBytes += 1);
  let sent = 0;
  let answered = 0;
  return {
    fromClient(chunk) {
      const statements: WireStatement[] = [];
      let requests = 0;
      for (const message of front.push(chunk)) {
        if (message.sql !== undefined) statements.push({ start: message.start, text: message.sql, request: sent + 1 });
        if (message.type === 'S' || message.type === 'Q') {
          sent += 1;
          requests += 1;
        }
      }
      return { statements, requests };
    },
    fromServer(chunk) {
      return back
        .push(chunk)
        .filter((message) => message.type === 'Z')
        .map((message) => ({ request: ++answered, idle: message.transaction === 'I' }));
    },
  };
};

/** Splits a byte stream into MySQL packets (3-byte length, 1-byte sequence id), across chunk boundaries. */
class MysqlPackets {
  private pending = Buffer.alloc(0);
  push(chunk: Buffer): Array<{ start: number; sequence: number; payload: Buffer }> {
    const carried = this.pending.length;
    const buffer = carried ? Buffer.concat([this.pending, chunk]) : chunk;
    const packets: Array<{ start: number; sequence: number; payload: Buffer }> = [];
    let offset = 0;
    while (buffer.length - offset >= 4) {
      const length = buffer.readUIntLE(offset, 3);
      if (buffer.length - offset < 4 + length) break;
      packets.push({ start: offset - carried, sequence: buffer[offset + 3]!, payload: buffer.subarray(offset + 4, offset + 4 + length) });
      offset += 4 + length;
    }
    this.pending = Buffer.from(buffer.subarray(offset));
    return packets;
  }
}

/** A length-encoded integer at `at`: its value and where the next field starts. */
function lenenc(buffer: Buffer, at: number): { value: number; next: number } {
  const first = buffer[at] ?? 0;
  if (first < 0xfb) return { value: first, next: at + 1 };
  if (first === 0xfc) return { value: buffer.readUInt16LE(at + 1), next: at + 3 };
  if (first === 0xfd) return { value: buffer.readUIntLE(at + 1, 3), next: at + 4 };
  return { value: Number(buffer.readBigUInt64LE(at + 1)), next: at + 9 };
}

const CLIENT_DEPRECATE_EOF = 0x01000000;
const SERVER_STATUS_IN_TRANS = 0x0001;
const SERVER_MORE_RESULTS_EXISTS = 0x0008;
/** Commands the server never answers. */
const NO_ANSWER = new Set([0x01 /* COM_QUIT */, 0x18 /* COM_STMT_SEND_LONG_DATA */, 0x19 /* COM_STMT_CLOSE */]);

/**
 * MySQL / MariaDB client-server protocol: COM_QUERY by its text, COM_STMT_EXECUTE by the text its COM_STMT_PREPARE
 * carried; answers are followed through OK / ERR / result sets (with or without CLIENT_DEPRECATE_EOF), and an answer
 * is idle when its status flags say no transaction is open.
 */
export const mysqlWire: Wire = () => {
  const client = new MysqlPackets();
  const server = new MysqlPackets();
  let serverCapabilities = 0;
  let deprecateEof = false;
  let authenticated = false;
  let handshakeSent = false;
  let sent = 0;
  let answered = 0;
  let inTransaction = false;
  /** Commands awaiting an answer, oldest first. */
  const waiting: Array<{ command: number; sql?: string }> = [];
  const prepared = new Map<number, string>();
  /** The answer being read: 'first' packet, column definitions left, rows, or definitions of a prepare to skip. */
  let phase: { kind: 'first' } | { kind: 'columns'; left: number } | { kind: 'eof' } | { kind: 'rows' } | { kind: 'skip'; left: number } = { kind: 'first' };

  const status = (payload: Buffer): number => {
    if (payload[0] === 0xfe && !deprecateEof) return payload.length >= 5 ? payload.readUInt16LE(3) : 0;
    const affected = lenenc(payload, 1);
    const insertId = lenenc(payload, affected.next);
    return insertId.next + 2 <= payload.length ? payload.readUInt16LE(insertId.next) : 0;
  };

  return {
    fromClient(chunk) {
      const statements: WireStatement[] = [];
      let requests = 0;
      for (const { start, sequence, payload } of client.push(chunk)) {
        if (!authenticated) {
          if (!handshakeSent && payload.length >= 4) {
            handshakeSent = true;
            deprecateEof = (payload.readUInt32LE(0) & serverCapabilities & CLIENT_DEPRECATE_EOF) !== 0;
          }
          continue;
        }
        if (sequence !== 0 || payload.length === 0) continue;
        const command = payload[0]!;
        let sql: string | undefined;
        if (command === 0x03) sql = payload.toString('utf8', 1);
        if (command === 0x16) sql = payload.toString('utf8', 1);
        if (command === 0x17 && payload.length >= 5) sql = prepared.get(payload.readUInt32LE(1));
        if (NO_ANSWER.has(command)) continue;
        sent += 1;
        requests += 1;
        waiting.push({ command, sql });
        // A prepare only names the statement; it runs when executed.
        if (sql !== undefined && command !== 0x16) statements.push({ start, text: sql, request: sent });
      }
      return { statements, requests };
    },
    fromServer(chunk) {
      const answers: WireAnswer[] = [];
      const finish = (flags: number | undefined) => {
        if (flags !== undefined) {
          inTransaction = (flags & SERVER_STATUS_IN_TRANS) !== 0;
          if ((flags & SERVER_MORE_RESULTS_EXISTS) !== 0) {
            phase = { kind: 'first' };
            return;
          }
        }
        waiting.shift();
        phase = { kind: 'first' };
        answers.push({ request: ++answered, idle: !inTransaction });
      };
      for (const { payload } of server.push(chunk)) {
        if (!authenticated) {
          if (!handshakeSent && payload[0] === 10) {
            // Initial handshake v10: capabilities are split around the auth data.
            const versionEnd = payload.indexOf(0, 1);
            const lower = payload.readUInt16LE(versionEnd + 1 + 4 + 8 + 1);
            const upper = payload.length >= versionEnd + 1 + 4 + 8 + 1 + 2 + 1 + 2 + 2 ? payload.readUInt16LE(versionEnd + 1 + 4 + 8 + 1 + 2 + 1 + 2) : 0;
            serverCapabilities = lower | (upper << 16);
          } else if (handshakeSent && (payload[0] === 0x00 || payload[0] === 0xff)) {
            authenticated = payload[0] === 0x00;
          }
          continue;
        }
        const head = payload[0];
        const current = waiting[0];
        switch (phase.kind) {
          case 'first':
            if (current?.command === 0x16 && head === 0x00 && payload.length >= 9) {
              prepared.set(payload.readUInt32LE(1), current.sql ?? '');
              const columns = payload.readUInt16LE(5);
              const params = payload.readUInt16LE(7);
              const left = params + (params > 0 && !deprecateEof ? 1 : 0) + columns + (columns > 0 && !deprecateEof ? 1 : 0);
              if (left === 0) finish(undefined);
              else phase = { kind: 'skip', left };
            } else if (head === 0x00 || (head === 0xfe && payload.length < 0xffffff)) finish(status(payload));
            else if (head === 0xff) finish(undefined);
            else {
              const count = lenenc(payload, 0).value;
              phase = count > 0 ? { kind: 'columns', left: count } : { kind: 'rows' };
            }
            break;
          case 'skip':
            if (--phase.left === 0) finish(undefined);
            break;
          case 'columns':
            if (--phase.left === 0) phase = deprecateEof ? { kind: 'rows' } : { kind: 'eof' };
            break;
          case 'eof':
            phase = { kind: 'rows' };
            break;
          case 'rows':
            if (head === 0xff) finish(undefined);
            else if (head === 0xfe && payload.length < (deprecateEof ? 0xffffff : 9)) finish(status(payload));
            break;
        }
      }
      return answers;
    },
  };
};

type Resp = string | Buffer | null | Resp[];

/** One RESP2 value at `at` (a client command is an array of bulk strings), or undefined when it is not all here. */
function parseResp(buffer: Buffer, at: number): { value: Resp; next: number } | undefined {
  if (at >= buffer.length) return undefined;
  const eol = buffer.indexOf('\r\n', at);
  if (eol === -1) return undefined;
  const type = String.fromCharCode(buffer[at]!);
  const line = buffer.toString('utf8', at + 1, eol);
  if (type === '+' || type === '-' || type === ':') return { value: line, next: eol + 2 };
  if (type === '$') {
    const length = Number(line);
    if (length < 0) return { value: null, next: eol + 2 };
    if (buffer.length < eol + 2 + length + 2) return undefined;
    return { value: buffer.subarray(eol + 2, eol + 2 + length), next: eol + 4 + length };
  }
  if (type === '*') {
    const length = Number(line);
    if (length < 0) return { value: null, next: eol + 2 };
    const items: Resp[] = [];
    let next = eol + 2;
    for (let i = 0; i < length; i++) {
      const item = parseResp(buffer, next);
      if (!item) return undefined;
      items.push(item.value);
      next = item.next;
    }
    return { value: items, next };
  }
  // An inline command.
  return { value: buffer.toString('utf8', at, eol).split(' '), next: eol + 2 };
}

/** Reads RESP values across chunk boundaries. */
class RespReader {
  private pending = Buffer.alloc(0);
  push(chunk: Buffer): Array<{ start: number; value: Resp }> {
    const carried = this.pending.length;
    const buffer = carried ? Buffer.concat([this.pending, chunk]) : chunk;
    const values: Array<{ start: number; value: Resp }> = [];
    let offset = 0;
    for (;;) {
      const parsed = parseResp(buffer, offset);
      if (!parsed) break;
      values.push({ start: offset - carried, value: parsed.value });
      offset = parsed.next;
    }
    this.pending = Buffer.from(buffer.subarray(offset));
    return values;
  }
}

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
const asText = (value: Resp | undefined) => (Buffer.isBuffer(value) ? value.toString('utf8') : typeof value === 'string' ? value : '');

/**
 * Redis (RESP2, pipelined): a command's text is its name and arguments; EVAL and EVALSHA are shown as `EVAL <script>`
 * when the script is known (from an EVAL on this proxy, or given up front: a server that already cached it only ever
 * sees EVALSHA). Every reply answers one command; Redis runs each command (a Lua script included) atomically, so
 * every answer is idle.
 */
export function redisWire(scripts: ReadonlyMap<string, string> = new Map()): Wire {
  const known = new Map(scripts);
  return () => {
    const client = new RespReader();
    const server = new RespReader();
    let sent = 0;
    let answered = 0;
    return {
      fromClient(chunk) {
        const statements: WireStatement[] = [];
        let requests = 0;
        for (const { start, value } of client.push(chunk)) {
          sent += 1;
          requests += 1;
          const args = Array.isArray(value) ? value : [value];
          const name = asText(args[0]).toUpperCase();
          // Clients send command names in any case (ioredis: lower case); shown upper case, as Redis documents them.
          let text = [name, ...args.slice(1).map(asText)].join(' ');
          if (name === 'EVAL') {
            const script = asText(args[1]);
            known.set(sha1(script), script);
            text = `EVAL ${script}`;
          } else if (name === 'EVALSHA') {
            const script = known.get(asText(args[1]).toLowerCase());
            if (script !== undefined) text = `EVAL ${script}`;
          }
          statements.push({ start, text, request: sent });
        }
        return { statements, requests };
      },
      fromServer(chunk) {
        return server.push(chunk).map(() => ({ request: ++answered, idle: true }));
      },
    };
  };
}

/** HTTP/1.1 messages (requests or responses) with Content-Length or chunked bodies, across chunk boundaries. */
class HttpReader {
  private pending = Buffer.alloc(0);
  constructor(private readonly side: 'request' | 'response') {}

  push(chunk: Buffer): Array<{ start: number; headers: Map<string, string>; body: Buffer }> {
    const carried = this.pending.length;
    const buffer = carried ? Buffer.concat([this.pending, chunk]) : chunk;
    const messages: Array<{ start: number; headers: Map<string, string>; body: Buffer }> = [];
    let offset = 0;
    for (;;) {
      const headEnd = buffer.indexOf('\r\n\r\n', offset);
      if (headEnd === -1) break;
      const lines = buffer.toString('latin1', offset, headEnd).split('\r\n');
      const headers = new Map<string, string>();
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      let next = headEnd + 4;
      let body: Buffer;
      if (this.side === 'response' && /^HTTP\/1\.\d 1\d\d/.test(lines[0] ?? '')) {
        // An interim answer (100 Continue) is not the answer.
        offset = next;
        continue;
      }
      if ((headers.get('transfer-encoding') ?? '').toLowerCase().includes('chunked')) {
        const parts: Buffer[] = [];
        let complete = false;
        for (;;) {
          const sizeEnd = buffer.indexOf('\r\n', next);
          if (sizeEnd === -1) break;
          const size = parseInt(buffer.toString('latin1', next, sizeEnd), 16);
          if (size === 0) {
            // No trailers: the CRLF right after; trailers: up to the blank line.
            if (buffer.length < sizeEnd + 4) break;
            if (buffer.toString('latin1', sizeEnd + 2, sizeEnd + 4) === '\r\n') next = sizeEnd + 4;
            else {
              const trailerEnd = buffer.indexOf('\r\n\r\n', sizeEnd + 2);
              if (trailerEnd === -1) break;
              next = trailerEnd + 4;
            }
            complete = true;
            break;
          }
          if (buffer.length < sizeEnd + 2 + size + 2) break;
          parts.push(buffer.subarray(sizeEnd + 2, sizeEnd + 2 + size));
          next = sizeEnd + 2 + size + 2;
        }
        if (!complete) break;
        body = Buffer.concat(parts);
      } else {
        const length = Number(headers.get('content-length') ?? 0);
        if (buffer.length < next + length) break;
        body = buffer.subarray(next, next + length);
        next += length;
      }
      messages.push({ start: offset - carried, headers, body });
      offset = next;
    }
    this.pending = Buffer.from(buffer.subarray(offset));
    return messages;
  }
}

/**
 * DynamoDB's HTTP API: a request's text is its operation (`X-Amz-Target: DynamoDB_20120810.PutItem`) and its JSON
 * body. Every request is its own atomic operation, so every answer is idle.
 */
export const dynamoWire: Wire = () => {
  const client = new HttpReader('request');
  const server = new HttpReader('response');
  let sent = 0;
  let answered = 0;
  return {
    fromClient(chunk) {
      const statements: WireStatement[] = [];
      let requests = 0;
      for (const { start, headers, body } of client.push(chunk)) {
        sent += 1;
        requests += 1;
        statements.push({ start, text: `${headers.get('x-amz-target') ?? ''} ${body.toString('utf8')}`, request: sent });
      }
      return { statements, requests };
    },
    fromServer(chunk) {
      return server.push(chunk).map(() => ({ request: ++answered, idle: true }));
    },
  };
};
