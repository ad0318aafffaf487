import { describe, expect, it } from 'vitest';
import { EngramError, ErrorCode } from '../../../src/errors.js';
import { memoryStore, type Store } from '../../../src/index.js';
import { storeSpec } from '../../spec/store-spec.js';

describe('store spec: memoryStore()', () => {
  for (const c of storeSpec) it(c.name, () => c.run(async () => memoryStore()));
});

describe('the store spec can fail', () => {
  /** A store that applies records before it checks the vectors: not atomic. */
  function nonAtomic(): Store {
    const inner = memoryStore();
    return {
      ...inner,
      async write(change) {
        if (change.put) await inner.write({ put: change.put });
        await inner.write({ ...change, put: undefined });
      },
    };
  }

  it('catches a non-atomic write', async () => {
    const atomicity = storeSpec.find((c) => c.name.startsWith('a write that fails midway'))!;
    await expect(atomicity.run(async () => nonAtomic())).rejects.toThrow(/records unchanged/);
  });

  it('catches a store that refuses a malformed vectors block with another code', async () => {
    const atomicity = storeSpec.find((c) => c.name.startsWith('a write that fails midway'))!;
    const recoded = (): Store => {
      const inner = memoryStore();
      return {
        ...inner,
        write: (change) => inner.write(change).catch((error: unknown) => Promise.reject(new EngramError(ErrorCode.STORE_FAILED, String(error)))),
      };
    };
    await expect(atomicity.run(async () => recoded())).rejects.toThrow(/expected an error with code DIMENSION_MISMATCH, got STORE_FAILED/);
  });

  it('catches a store that forgets vectors of a second embedder', async () => {
    const perEmbedder = storeSpec.find((c) => c.name.startsWith('vectors are kept per embedder'))!;
    const forgetful = (): Store => {
      const inner = memoryStore();
      return { ...inner, loadVectors: async (id, dim) => (id === 'e2' ? { vectorSpace: id, dim, ids: [], data: new Float32Array(0) } : inner.loadVectors(id, dim)) };
    };
    await expect(perEmbedder.run(async () => forgetful())).rejects.toThrow(/e2 values/);
  });
});
