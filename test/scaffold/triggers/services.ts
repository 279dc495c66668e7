import net from 'node:net';

export const REDIS = { host: '127.0.0.1', port: Number(process.env.REDIS_PORT ?? 6379) };
export const RABBITMQ_URL = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
export const NATS_SERVERS = process.env.NATS_URL ?? '127.0.0.1:4222';

/** Skip reason when a service's port does not answer; under CI a missing service is a failure, never a skip. */
export async function serviceSkipReason(name: string, host: string, port: number, start: string): Promise<string | undefined> {
  const reachable = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(2_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
  if (reachable) return undefined;
  const reason = `${name} at ${host}:${port} is unreachable; start it with: ${start}`;
  if (process.env.CI) throw new Error(`${reason}. CI must run these tests.`);
  return reason;
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs` naming `what`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
