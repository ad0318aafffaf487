/** util/keys.ts: unknown names refused with the nearest valid one. */
import { describe, expect, it } from 'vitest';
import { checkKnownKeys, editDistance, nearestKey } from '../../../src/util/keys.js';

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and swaps of neighbours', () => {
    expect(editDistance('embedder', 'embedder')).toBe(0);
    expect(editDistance('embeder', 'embedder')).toBe(1);
    expect(editDistance('projcet', 'project')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
  });
});

describe('nearestKey', () => {
  const keys = ['embedder', 'store', 'search', 'k', 'tokenBudget'];
  it('takes an alias first, then the closest spelling within a third of the name', () => {
    expect(nearestKey('embeder', keys)).toBe('embedder');
    expect(nearestKey('Store', keys)).toBe('store');
    expect(nearestKey('limit', keys, { limit: 'k' })).toBe('k');
    expect(nearestKey('topK', keys, { topk: 'k' })).toBe('k');
    expect(nearestKey('zzzzzzzz', keys)).toBeUndefined();
    // An alias to a key the list does not hold is no suggestion.
    expect(nearestKey('limit', ['store'], { limit: 'k' })).toBeUndefined();
  });
});

describe('checkKnownKeys', () => {
  it('refuses the first unknown key with INVALID_INPUT, naming it and the nearest valid one', () => {
    expect(() => checkKnownKeys({ store: 1, embeder: 2 }, ['store', 'embedder'])).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringContaining("unknown option 'embeder' (did you mean 'embedder'?)"), details: { key: 'embeder', suggestion: 'embedder' } }),
    );
  });

  it('lists the valid keys when none is near, and says where the key was', () => {
    expect(() => checkKnownKeys({ colour: 1 }, ['project', 'tags'], { noun: 'field', prefix: 'filter.' })).toThrow("unknown field 'filter.colour': valid fields are 'project', 'tags'");
    expect(() => checkKnownKeys({ projects: [] }, ['project', 'tags'], { prefix: 'filter.' })).toThrow("unknown option 'filter.projects' (did you mean 'filter.project'?)");
  });

  it('counts a key set to undefined, and leaves anything not a plain object to the caller', () => {
    expect(() => checkKnownKeys({ topK: undefined }, ['k'], { aliases: { topk: 'k' } })).toThrow("(did you mean 'k'?)");
    for (const value of [undefined, null, 3, 'text', [1, 2]]) expect(() => checkKnownKeys(value, ['k'])).not.toThrow();
    expect(() => checkKnownKeys({ k: 1 }, ['k'])).not.toThrow();
    // Inherited names are not own keys.
    expect(() => checkKnownKeys(Object.create({ inherited: 1 }) as object, ['k'])).not.toThrow();
  });
});
