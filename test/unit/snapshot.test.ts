import { describe, expect, it } from 'vitest';
import { createEngine, memoryStore, type Store } from '../../src/index.js';
import { fingerprint } from '../../src/snapshot.js';
import type { MemoryRecord } from '../../src/types.js';

const clock = () => Date.UTC(2024, 5, 1);

function reopenable(): Store {
  const inner = memoryStore();
  return { ...inner, close: async () => undefined };
}

async function seeded() {
  const store = reopenable();
  const engine = await createEngine({ clock, store });
  await engine.add(Array.from({ length: 40 }, (_, i) => ({ id: `m${i}`, text: `note ${i} about ${i % 2 ? 'apples' : 'pears'}`, tags: [`t${i % 3}`] })));
  await engine.search('apples'); // touch bookkeeping must not make the snapshot stale
  const snapshot = await engine.indexSnapshot();
  return { store, engine, snapshot };
}

const ranking = async (engine: Awaited<ReturnType<typeof createEngine>>, q: string) =>
  (await engine.search(q, { touch: false, k: 10 })).hits.map((h) => [h.id, h.score]);

describe('lexical index snapshots', () => {
  it('a matching snapshot is loaded instead of re-indexing, with identical results', async () => {
    const { store, engine, snapshot } = await seeded();
    await engine.search('pears');
    const reopened = await createEngine({ clock, store, indexSnapshot: snapshot });
    expect(reopened.lexicalSource).toBe('snapshot');
    const rebuilt = await createEngine({ clock, store });
    expect(rebuilt.lexicalSource).toBe('rebuilt');
    for (const q of ['apples', 'pears t1', 'note 7']) expect(await ranking(reopened, q)).toEqual(await ranking(rebuilt, q));
    // the restored index keeps working for changes
    await reopened.add({ id: 'x', text: 'kiwis' });
    expect((await reopened.search('kiwis')).hits.map((h) => h.id)).toEqual(['x']);
  });

  it('is ignored (rebuilt) when the records changed, the settings differ, or it is corrupt', async () => {
    const { store, engine, snapshot } = await seeded();
    expect((await createEngine({ clock, store, indexSnapshot: { ...snapshot, lexical: '{not json' } })).lexicalSource).toBe('rebuilt');
    expect((await createEngine({ clock, store, indexSnapshot: { ...snapshot, version: 99 } })).lexicalSource).toBe('rebuilt');
    expect((await createEngine({ clock, store, indexSnapshot: snapshot, lexical: { stopWords: false } })).lexicalSource).toBe('rebuilt');
    await engine.update('m3', { tags: ['changed'] });
    const stale = await createEngine({ clock, store, indexSnapshot: snapshot });
    expect(stale.lexicalSource).toBe('rebuilt');
    expect((await stale.search('changed')).hits.map((h) => h.id)).toEqual(['m3']);
  });

  it('fingerprints ignore order and bookkeeping but see ids, texts and tags', () => {
    const r = (id: string, text: string, extra: Partial<MemoryRecord> = {}): MemoryRecord => ({
      id, text, createdAt: 0, priority: 1, pinned: false, tags: [], accessCount: 0, ...extra,
    });
    const base = [r('a', 'one'), r('b', 'two')];
    expect(fingerprint(base)).toBe(fingerprint([base[1]!, base[0]!]));
    expect(fingerprint(base)).toBe(fingerprint([r('a', 'one', { accessCount: 9, pinned: true }), r('b', 'two')]));
    expect(fingerprint(base)).not.toBe(fingerprint([r('a', 'one!'), r('b', 'two')]));
    expect(fingerprint(base)).not.toBe(fingerprint([r('a', 'one', { tags: ['x'] }), r('b', 'two')]));
    expect(fingerprint(base)).not.toBe(fingerprint([r('a', 'one')]));
  });
});
