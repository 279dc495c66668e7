import net from 'node:net';
import { postgresWire, type Wire, type WireSession } from './wire.js';

/**
 * A TCP proxy between the app and its store (PostgreSQL, MySQL/MariaDB, Redis, DynamoDB) that misbehaves on command: refuse connections, stall traffic (held,
 * then delivered in order when healed, as TCP would after a partition), delay every chunk, and cut a connection at
 * the moment it carries a given statement, either before the server sees it or after the server committed it but
 * before the app hears back. Every fault is an event the test can await; nothing depends on timing.
 */

export type CutPoint =
  /** The statement never reaches the server: the connection dies as the app sends it. */
  | 'before-server'
  /**
   * The server runs the statement and ends its transaction (autocommit, or the COMMIT that follows); the answer is
   * dropped and the connection dies.
   */
  | 'after-commit';

export interface CutRule {
  /** Resolves with the SQL that triggered the cut. */
  readonly fired: Promise<string>;
}

/** `requests`: how many requests end in this chunk (each gets one answer back). */
type Item = { readonly data: Buffer; readonly requests?: number } | { readonly end: true };

interface Direction {
  readonly queue: Item[];
  /** Delivery chain, so delayed chunks keep their order. */
  chain: Promise<void>;
}

interface Link {
  readonly client: net.Socket;
  readonly server: net.Socket;
  readonly wire: WireSession;
  readonly toServer: Direction;
  readonly toClient: Direction;
  /** Requests delivered to the server that it has not answered yet. */
  outstanding: number;
  /** Cut once the server has answered this request (or a later one) with no transaction open. */
  cutAtReady: { resolve(sql: string): void; sql: string; request: number } | undefined;
  closed: boolean;
}

interface PendingRule {
  readonly match: (sql: string) => boolean;
  readonly point: CutPoint;
  resolve(sql: string): void;
}

export class FaultProxy {
  private mode: 'pass' | 'stall' | 'refuse' = 'pass';
  private delayMs = 0;
  private readonly links = new Set<Link>();
  private rules: PendingRule[] = [];
  private quietWaiters: Array<() => void> = [];
  /** Connections accepted so far (refused ones included). */
  accepted = 0;

  private constructor(
    private readonly listener: net.Server,
    private readonly target: { host: string; port: number },
    private readonly wire: Wire,
  ) {}

  /** `wire`: how the store's protocol is read (PostgreSQL by default); statement cuts need one that recognises it. */
  static async start(target: { host: string; port: number }, wire: Wire = postgresWire): Promise<FaultProxy> {
    const listener = net.createServer({ allowHalfOpen: true });
    const proxy = new FaultProxy(listener, target, wire);
    listener.on('connection', (socket) => proxy.accept(socket));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.listener.address() as net.AddressInfo).port;
  }

  /** The same connection string (any scheme), pointed at the proxy. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  /** Existing connections are cut and new ones reset at once, as a database host that went away. */
  refuse(): void {
    this.mode = 'refuse';
    this.cutAll();
  }

  /** Traffic is held in both directions (nothing is lost); heal() delivers it in order. */
  stall(): void {
    this.mode = 'stall';
  }

  /** Every chunk waits this long before it is passed on (0 turns it off). */
  delay(ms: number): void {
    this.delayMs = ms;
  }

  /** Back to normal; held traffic is delivered, including the closes of connections the app gave up meanwhile. */
  heal(): void {
    this.mode = 'pass';
    for (const link of this.links) {
      this.drain(link, 'toServer');
      this.drain(link, 'toClient');
    }
  }

  /** Cuts every open connection (both sides see it die). */
  cutAll(): void {
    for (const link of this.links) this.cut(link);
  }

  /**
   * Cuts the first connection that carries a statement whose SQL matches, at the given point. Once only: the app's
   * next attempt on a new connection goes through.
   */
  cutOn(match: RegExp | ((sql: string) => boolean), point: CutPoint): CutRule {
    let resolve!: (sql: string) => void;
    const fired = new Promise<string>((done) => (resolve = done));
    const test = typeof match === 'function' ? match : (sql: string) => match.test(sql);
    this.rules.push({ match: test, point, resolve });
    return { fired };
  }

  /** Resolves once the server has answered everything delivered to it (or those connections closed). */
  quiet(): Promise<void> {
    if (this.isQuiet()) return Promise.resolve();
    return new Promise((resolve) => this.quietWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.listener.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.accepted += 1;
    if (this.mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    const server = net.connect({ host: this.target.host, port: this.target.port, allowHalfOpen: true });
    const link: Link = {
      client,
      server,
      wire: this.wire(),
      toServer: { queue: [], chain: Promise.resolve() },
      toClient: { queue: [], chain: Promise.resolve() },
      outstanding: 0,
      cutAtReady: undefined,
      closed: false,
    };
    this.links.add(link);
    client.setNoDelay(true);
    server.setNoDelay(true);

    client.on('data', (chunk: Buffer) => this.fromClient(link, chunk));
    server.on('data', (chunk: Buffer) => this.fromServer(link, chunk));
    // A half-close travels like data: after whatever is still queued in that direction.
    client.on('end', () => this.enqueue(link, 'toServer', { end: true }));
    server.on('end', () => this.enqueue(link, 'toClient', { end: true }));
    // An abrupt close by the app still lets bytes already "on the wire" reach the server, then closes that side.
    client.on('close', () => {
      link.toClient.queue.length = 0;
      if (!link.closed) this.enqueue(link, 'toServer', { end: true });
    });
    server.on('close', () => {
      link.outstanding = 0;
      this.finish(link);
    });
    client.on('error', () => undefined);
    server.on('error', () => client.destroy());
  }

  private fromClient(link: Link, chunk: Buffer): void {
    const { statements, requests } = link.wire.fromClient(chunk);
    for (const statement of statements) {
      const rule = this.rules.find((candidate) => candidate.match(statement.text));
      if (!rule) continue;
      this.rules = this.rules.filter((candidate) => candidate !== rule);
      if (rule.point === 'before-server') {
        // Bytes before this statement go through; the statement itself never does.
        if (statement.start > 0) this.enqueue(link, 'toServer', { data: chunk.subarray(0, statement.start) });
        this.cut(link);
        rule.resolve(statement.text);
        return;
      }
      link.cutAtReady = { resolve: rule.resolve, sql: statement.text, request: statement.request };
    }
    this.enqueue(link, 'toServer', { data: chunk, requests });
  }

  private fromServer(link: Link, chunk: Buffer): void {
    const answers = link.wire.fromServer(chunk);
    const cutAt = link.cutAtReady;
    if (cutAt && answers.some((answer) => answer.request >= cutAt.request && answer.idle)) {
      // The server finished the statement and, once no transaction is open any more, committed it (or, had the
      // transaction failed, rolled it back): the app never learns which.
      link.cutAtReady = undefined;
      this.cut(link);
      cutAt.resolve(cutAt.sql);
      return;
    }
    link.outstanding = Math.max(0, link.outstanding - answers.length);
    this.enqueue(link, 'toClient', { data: chunk });
    this.notifyQuiet();
  }

  private enqueue(link: Link, direction: 'toServer' | 'toClient', item: Item): void {
    if (link.closed) return;
    link[direction].queue.push(item);
    this.drain(link, direction);
  }

  private drain(link: Link, direction: 'toServer' | 'toClient'): void {
    if (this.mode === 'stall' || link.closed) return;
    const lane = link[direction];
    const items = lane.queue.splice(0);
    if (items.length === 0) return;
    // Counted as soon as they leave the queue, so quiet() cannot slip between dequeue and delivery.
    for (const item of items) if ('data' in item) link.outstanding += item.requests ?? 0;
    const target = direction === 'toServer' ? link.server : link.client;
    const deliver = () => {
      for (const item of items) {
        if (link.closed) return;
        if ('end' in item) {
          target.end();
        } else {
          target.write(item.data);
        }
      }
    };
    const delay = this.delayMs;
    if (delay === 0) {
      lane.chain = lane.chain.then(deliver);
      return;
    }
    lane.chain = lane.chain.then(() => new Promise<void>((resolve) => setTimeout(resolve, delay))).then(deliver);
  }

  private cut(link: Link): void {
    link.client.destroy();
    link.server.destroy();
    this.finish(link);
  }

  private finish(link: Link): void {
    if (!link.closed) {
      link.closed = true;
      link.toServer.queue.length = 0;
      link.toClient.queue.length = 0;
      link.client.destroy();
      link.server.destroy();
      this.links.delete(link);
    }
    this.notifyQuiet();
  }

  private isQuiet(): boolean {
    for (const link of this.links) if (link.outstanding > 0 || link.toServer.queue.length > 0) return false;
    return true;
  }

  private notifyQuiet(): void {
    if (!this.isQuiet()) return;
    const waiters = this.quietWaiters.splice(0);
    for (const waiter of waiters) waiter();
  }
}
