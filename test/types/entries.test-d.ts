/**
 * The two sub-path entries: `engram/advanced` holds the extension points an app plugs into the engine, and
 * `engram/internals` the engine's own parts; neither leaks into the other.
 */
import { describe, expectTypeOf, test } from 'vitest';
import * as advanced from '../../src/advanced.js';
import * as internals from '../../src/internals.js';
import type { EngineOptions, Engine, SearchOptions } from '../../src/node.js';

describe('engram/advanced: extension points', () => {
  test('a vector scan plugs into createEngine({ vectorScan })', () => {
    expectTypeOf(() => advanced.exactScan).toExtend<NonNullable<EngineOptions['vectorScan']>>();
    expectTypeOf(() => new advanced.QuantizedScan(advanced.defaultQuantizedScanOptions)).toExtend<NonNullable<EngineOptions['vectorScan']>>();
    expectTypeOf<advanced.VectorScan>().toHaveProperty('topK');
  });

  test("an engine's snapshot opens the next engine, and resolved search options are the engine's own", () => {
    expectTypeOf<Awaited<ReturnType<Engine['indexSnapshot']>>>().toEqualTypeOf<advanced.IndexSnapshot>();
    expectTypeOf<advanced.IndexSnapshot>().toExtend<NonNullable<EngineOptions['indexSnapshot']>>();
    expectTypeOf(advanced.resolveSearchOptions).returns.toEqualTypeOf<SearchOptions>();
    expectTypeOf(advanced.defaultSearchOptions).toExtend<SearchOptions>();
    expectTypeOf(advanced.estimateTokens).toEqualTypeOf<(text: string) => number>();
  });

  test('errors cross an app channel as plain data and come back as EngramError', () => {
    expectTypeOf(advanced.deserializeError).parameter(0).toEqualTypeOf<advanced.SerializedEngramError>();
  });

  test('holds none of the internals', () => {
    // @ts-expect-error LexicalIndex is an internal
    void advanced.LexicalIndex;
    // @ts-expect-error the learning rules are internals
    void advanced.reinforced;
    // @ts-expect-error DAY_MS is an internal
    void advanced.DAY_MS;
  });
});

describe('engram/internals: the engine parts', () => {
  test('the lexical index shows what a query searches for', () => {
    const index = new internals.LexicalIndex();
    expectTypeOf(index.queryTerms).toBeFunction();
    expectTypeOf(internals.stemEnglish).toEqualTypeOf<(word: string) => string>();
    expectTypeOf(internals.ENGLISH_STOP_WORDS).toExtend<ReadonlySet<string>>();
  });

  test('the association graph is read through the reader the pipeline declares', () => {
    expectTypeOf<internals.AssociationGraph>().toExtend<internals.AssociationReader>();
    expectTypeOf(internals.DAY_MS).toBeNumber();
  });

  test('holds none of the extension points', () => {
    // @ts-expect-error the vector scans are in engram/advanced
    void internals.exactScan;
    // @ts-expect-error search defaults are in engram/advanced
    void internals.defaultSearchOptions;
  });
});
