import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Arrival {
  /** pid of the app process whose handler is waiting. */
  readonly worker: number;
  /** Lets the handler continue. */
  release(): void;
}

/**
 * Where app handlers stop and wait: a handler asked to pause calls GET /<point>/<key> and continues only when the
 * test releases it. The test awaits the arrival, so it acts (kill, expire the lease, retry elsewhere) at a known
 * point of the action instead of after a guessed delay.
 */
export class Barrier {
  private readonly arrivals = new Map<string, Arrival>();
  private readonly waiters = new Map<string, (arrival: Arrival) => void>();

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<Barrier> {
    const server = http.createServer();
    const barrier = new Barrier(server);
    server.on('request', (request, response) => barrier.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return barrier;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves when a handler reaches `point` for `key` (or already has). */
  arrival(point: string, key: string): Promise<Arrival> {
    const id = `${point}/${key}`;
    const arrived = this.arrivals.get(id);
    if (arrived) {
      this.arrivals.delete(id);
      return Promise.resolve(arrived);
    }
    return new Promise((resolve) => this.waiters.set(id, resolve));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const [, point = '', key = ''] = (request.url ?? '').split('/').map((part) => decodeURIComponent(part));
    const id = `${point}/${key}`;
    const arrival: Arrival = {
      worker: Number(request.headers['x-worker']),
      release: () => response.writeHead(204).end(),
    };
    const waiter = this.waiters.get(id);
    if (waiter) {
      this.waiters.delete(id);
      waiter(arrival);
    } else {
      this.arrivals.set(id, arrival);
    }
  }
}
