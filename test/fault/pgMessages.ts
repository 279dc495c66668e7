/**
 * Just enough of the PostgreSQL wire protocol (v3) to see which SQL a connection carries, in both the simple
 * protocol (Query) and the extended one (Parse, then Bind by statement name: pg sends a named statement's text
 * only once per connection, so later executions are recognised through the name).
 */

export interface PgMessage {
  /** Message type byte as a character; '' for the untyped startup-phase message. */
  readonly type: string;
  /** Offset of the message's first byte in the chunk it ended in (negative when it started in an earlier chunk). */
  readonly start: number;
  readonly end: number;
  /** The SQL this message asks the server to run (Query, Parse, or Bind of a known statement). */
  readonly sql?: string;
  /** ReadyForQuery's transaction status: 'I' idle (committed or rolled back), 'T' in a transaction, 'E' failed one. */
  readonly transaction?: string;
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;

/** Splits one direction of a connection into messages, across chunk boundaries. */
export class PgMessageReader {
  private pending = Buffer.alloc(0);
  private startupPhase: boolean;
  private readonly statements = new Map<string, string>();

  /** frontend: client → server (starts with the untyped startup message); backend: server → client. */
  constructor(private readonly side: 'frontend' | 'backend') {
    this.startupPhase = side === 'frontend';
  }

  /** The backend answers SSLRequest with one untyped byte; the frontend reader tells the backend one to skip it. */
  skipBytes = 0;
  onSslRequest: (() => void) | undefined;

  push(chunk: Buffer): PgMessage[] {
    const carried = this.pending.length;
    const buffer = carried ? Buffer.concat([this.pending, chunk]) : chunk;
    const messages: PgMessage[] = [];
    let offset = 0;
    if (this.skipBytes > 0) {
      const skipped = Math.min(this.skipBytes, buffer.length);
      this.skipBytes -= skipped;
      offset = skipped;
    }
    for (;;) {
      if (this.startupPhase) {
        if (buffer.length - offset < 8) break;
        const length = buffer.readInt32BE(offset);
        if (buffer.length - offset < length) break;
        const code = buffer.readInt32BE(offset + 4);
        // SSL/GSS negotiation precedes the real startup message, which stays untyped too.
        if (code === SSL_REQUEST || code === GSS_REQUEST) this.onSslRequest?.();
        else this.startupPhase = false;
        messages.push({ type: '', start: offset - carried, end: offset + length - carried });
        offset += length;
        continue;
      }
      if (buffer.length - offset < 5) break;
      const type = String.fromCharCode(buffer[offset]!);
      const length = buffer.readInt32BE(offset + 1);
      if (buffer.length - offset < 1 + length) break;
      const body = buffer.subarray(offset + 5, offset + 1 + length);
      const transaction = this.side === 'backend' && type === 'Z' ? String.fromCharCode(body[0]!) : undefined;
      messages.push({ type, start: offset - carried, end: offset + 1 + length - carried, sql: this.sqlOf(type, body), transaction });
      offset += 1 + length;
    }
    this.pending = Buffer.from(buffer.subarray(offset));
    return messages;
  }

  private sqlOf(type: string, body: Buffer): string | undefined {
    if (this.side !== 'frontend') return undefined;
    if (type === 'Q') return cString(body, 0).text;
    if (type === 'P') {
      const name = cString(body, 0);
      const text = cString(body, name.next).text;
      if (name.text) this.statements.set(name.text, text);
      return text;
    }
    if (type === 'B') {
      const portal = cString(body, 0);
      const name = cString(body, portal.next).text;
      // The unnamed statement was just parsed in the same flight; its Parse already matched.
      return name ? this.statements.get(name) : undefined;
    }
    return undefined;
  }
}

function cString(buffer: Buffer, from: number): { text: string; next: number } {
  const end = buffer.indexOf(0, from);
  const stop = end === -1 ? buffer.length : end;
  return { text: buffer.toString('utf8', from, stop), next: stop + 1 };
}
