import { describe, expect, it } from 'vitest';
import { applyPatch, defaultRecordLimits, recordFromImport, recordFromInput } from '../../../src/engine/validate.js';
import { createEngine, isEngramError } from '../../../src/index.js';
import { reopenable } from '../helpers/stores.js';

const NOW = Date.UTC(2024, 5, 1);
const limits = defaultRecordLimits;

function invalidMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isEngramError(error) && error.code).toBe('INVALID_INPUT');
    return (error as Error).message;
  }
  throw new Error('expected INVALID_INPUT');
}

describe('quality: validation (validate.ts)', () => {
  it('keeps a finite number from 0 to 1, ends included; absent or null on add means none', () => {
    for (const quality of [0, 1, 0.5, 1e-9, 1 - 1e-16]) {
      expect(recordFromInput({ text: 'x', quality }, NOW, limits).quality).toBe(quality);
    }
    expect(Object.is(recordFromInput({ text: 'x', quality: -0 }, NOW, limits).quality, 0)).toBe(true);
    expect('quality' in recordFromInput({ text: 'x' }, NOW, limits)).toBe(false);
    expect('quality' in recordFromInput({ text: 'x', quality: null as unknown as number }, NOW, limits)).toBe(false);
  });

  it('refuses anything else with INVALID_INPUT naming the field, the item and the range', () => {
    for (const bad of [-0.01, 1.01, NaN, Infinity, -Infinity, '0.5', true, {}, [0.5], 5n]) {
      const message = invalidMessage(() => recordFromInput({ text: 'x', quality: bad as number }, NOW, limits, 'memory[3]'));
      expect(message).toMatch(/^Engram: memory\[3\]\.quality must be a number from 0 to 1, got /);
    }
    expect(invalidMessage(() => recordFromInput({ text: 'x', quality: 2 }, NOW, limits))).toBe('Engram: memory.quality must be a number from 0 to 1, got 2');
  });

  it('update sets, changes and (with null) clears it; undefined leaves it; a bad value changes nothing', () => {
    const base = recordFromInput({ id: 'a', text: 'x', quality: 0.4 }, NOW, limits);
    expect(applyPatch(base, { quality: 0.9 }, NOW + 1, limits).quality).toBe(0.9);
    expect(applyPatch(base, { text: 'y' }, NOW + 1, limits).quality).toBe(0.4);
    expect(applyPatch(base, { quality: undefined }, NOW + 1, limits).quality).toBe(0.4);
    expect('quality' in applyPatch(base, { quality: null }, NOW + 1, limits)).toBe(false);
    expect(invalidMessage(() => applyPatch(base, { quality: 1.5 }, NOW + 1, limits))).toMatch(/^Engram: patch for "a"\.quality must be a number from 0 to 1/);
    expect(base.quality).toBe(0.4);
  });

  it('import validates it like add', () => {
    expect(recordFromImport({ id: 'a', text: 'x', quality: 0.25, accessCount: 2 }, NOW, limits, 'records[0]').quality).toBe(0.25);
    expect(invalidMessage(() => recordFromImport({ id: 'a', text: 'x', quality: -1 }, NOW, limits, 'records[0]'))).toMatch(/^Engram: records\[0\]\.quality/);
  });
});

describe('quality: through the engine', () => {
  it('add, get, update (set and clear), export and import round trip, and a reopen from the store', async () => {
    const store = reopenable();
    const engine = await createEngine({ store, clock: () => NOW });
    await engine.add([{ id: 'a', text: 'alpha', quality: 0.8 }, { id: 'b', text: 'beta' }]);
    expect((await engine.get('a'))!.quality).toBe(0.8);
    expect('quality' in (await engine.get('b'))!).toBe(false);

    await expect(engine.add({ id: 'c', text: 'gamma', quality: 3 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(engine.update('a', { quality: -0.5 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(await engine.count()).toBe(2);
    expect((await engine.get('a'))!.quality).toBe(0.8);

    expect((await engine.update('b', { quality: 0 })).quality).toBe(0);
    expect('quality' in (await engine.update('a', { quality: null }))).toBe(false);
    await engine.update('a', { quality: 0.3 });

    const exported = await engine.export();
    const other = await createEngine({ clock: () => NOW });
    await other.import(exported);
    expect(await other.export()).toEqual(exported);
    expect(Object.fromEntries(exported.map((r) => [r.id, r.quality]))).toEqual({ a: 0.3, b: 0 });

    // A second engine on the same store reads what the first one wrote.
    const reopened = await createEngine({ store, clock: () => NOW });
    expect(Object.fromEntries((await reopened.export()).map((r) => [r.id, r.quality]))).toEqual({ a: 0.3, b: 0 });
    await Promise.all([engine.close(), other.close(), reopened.close()]);
  });
});
