import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One call the provider received. */
export interface ProviderCall {
  readonly idempotencyKey: string | undefined;
  /** True when the provider answered from its idempotency cache instead of creating a charge. */
  readonly replayed: boolean;
  readonly chargeId: string;
}

/**
 * A payment provider on loopback that behaves like Stripe for idempotency: the first POST /v1/charges with an
 * Idempotency-Key creates a charge and caches the answer; the same key with the same parameters gets the cached
 * answer back (`Idempotent-Replayed: true`); the same key with other parameters is refused with 400. Without a key
 * every call creates a charge. So `charges` counts the effects a customer would see on their card.
 */
export class FakeProvider {
  readonly calls: ProviderCall[] = [];
  /** Created charges by idempotency key ('' for calls without one). */
  readonly charges = new Map<string, string[]>();
  private readonly cache = new Map<string, { paramsHash: string; body: string }>();
  private sequence = 0;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<FakeProvider> {
    const server = http.createServer();
    const provider = new FakeProvider(server);
    server.on('request', (request, response) => provider.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return provider;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Charges created for this provider key (what the card holder sees). */
  chargesFor(key: string): number {
    return this.charges.get(key)?.length ?? 0;
  }

  get totalCharges(): number {
    let total = 0;
    for (const list of this.charges.values()) total += list.length;
    return total;
  }

  reset(): void {
    this.calls.length = 0;
    this.charges.clear();
    this.cache.clear();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/charges') {
        response.writeHead(404).end();
        return;
      }
      const params = Buffer.concat(chunks).toString('utf8');
      const paramsHash = createHash('sha256').update(params).digest('hex');
      const header = request.headers['idempotency-key'];
      const key = typeof header === 'string' ? header : undefined;
      // Everything below runs without awaiting, so two concurrent calls with one key cannot both create a charge.
      const cached = key === undefined ? undefined : this.cache.get(key);
      if (cached) {
        if (cached.paramsHash !== paramsHash) {
          response.writeHead(400, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ error: { type: 'idempotency_error', message: 'Keys for idempotent requests can only be used with the same parameters they were first used with.' } }));
          return;
        }
        this.calls.push({ idempotencyKey: key, replayed: true, chargeId: (JSON.parse(cached.body) as { id: string }).id });
        response.writeHead(200, { 'content-type': 'application/json', 'idempotent-replayed': 'true' });
        response.end(cached.body);
        return;
      }
      this.sequence += 1;
      const id = `ch_${this.sequence}`;
      const body = JSON.stringify({ id, object: 'charge', params: JSON.parse(params || '{}') as unknown });
      if (key !== undefined) this.cache.set(key, { paramsHash, body });
      const list = this.charges.get(key ?? '') ?? [];
      list.push(id);
      this.charges.set(key ?? '', list);
      this.calls.push({ idempotencyKey: key, replayed: false, chargeId: id });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(body);
    });
  }
}
