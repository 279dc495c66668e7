import { afterAll } from 'vitest';
import { runStoreContract } from './contract.js';
import { materializeStore } from './materialize.js';

// In this process's memory: nothing to be away, so this suite always runs. Every scaffold carries the same
// memoryStore.ts, whatever its database; the reference scaffold's copy is the one tested.
const scaffold = await materializeStore('postgres');
afterAll(() => scaffold.remove());
const { createMemoryStore } = await scaffold.load('memoryStore');
await runStoreContract(scaffold, 'in memory (one process)', async () => {
  const store = createMemoryStore();
  return {
    store,
    unavailable: async () => {
      // A closed store is one that went away: every call fails closed.
      const closed = createMemoryStore();
      closed.close();
      return closed;
    },
    cleanup: async () => store.deleteExpired(),
    close: async () => store.close(),
  };
});
