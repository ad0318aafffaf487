/**
 * What is declared once and derived everywhere else: the closed sets (link kinds, trace stage names) as const
 * arrays with their types derived from them, the option key lists checked against their types, and the engine
 * options a Memory forwards, declared once (ForwardedOptions) for the page, the worker and the host.
 */
import { describe, expectTypeOf, test } from 'vitest';
import { LINK_KINDS, TRACE_STAGE_NAMES, type EngineOptions, type LinkKind, type MemoryOptions, type TraceStage, type TraceStageName } from '../../src/index.js';
import { FORWARDED_OPTIONS, type ForwardedOptions, type SetForwardedOptions, type WorkerOpenOptions } from '../../src/contract/protocol.js';
import type { HostOptions } from '../../worker/host.js';
import { keysOf, type KeySet } from '../../src/util/keys.js';
import { SEARCH_OPTION_KEYS } from '../../src/search/option-keys.js';
import type { SearchOptions } from '../../src/search/options.js';

describe('closed sets', () => {
  test('LinkKind is exactly the members of LINK_KINDS', () => {
    expectTypeOf<LinkKind>().toEqualTypeOf<(typeof LINK_KINDS)[number]>();
    expectTypeOf<'references'>().toExtend<LinkKind>();
    // @ts-expect-error a kind outside the list is no LinkKind
    expectTypeOf<'mentions'>().toExtend<LinkKind>();
  });

  test('TraceStage.name is exactly the members of TRACE_STAGE_NAMES', () => {
    expectTypeOf<TraceStage['name']>().toEqualTypeOf<TraceStageName>();
    expectTypeOf<TraceStageName>().toEqualTypeOf<(typeof TRACE_STAGE_NAMES)[number]>();
    expectTypeOf<'fuse'>().toExtend<TraceStageName>();
    // @ts-expect-error a stage the pipeline does not have
    expectTypeOf<'fusion'>().toExtend<TraceStageName>();
  });
});

describe('key lists', () => {
  test('a KeySet must name every key of its type, and no other', () => {
    expectTypeOf(keysOf<{ a?: number; b: string }>({ a: true, b: true })).toEqualTypeOf<readonly ('a' | 'b')[]>();
    // @ts-expect-error b is missing
    void ({ a: true } satisfies KeySet<{ a?: number; b: string }>);
    // @ts-expect-error c is not a key of the type
    void ({ a: true, b: true, c: true } satisfies KeySet<{ a?: number; b: string }>);
  });

  test('the search option list holds exactly the keys of SearchOptions', () => {
    expectTypeOf<(typeof SEARCH_OPTION_KEYS)[number]>().toEqualTypeOf<keyof SearchOptions>();
  });
});

describe('forwarded engine options', () => {
  test('the table holds exactly the keys of ForwardedOptions', () => {
    expectTypeOf<keyof typeof FORWARDED_OPTIONS>().toEqualTypeOf<keyof ForwardedOptions>();
  });

  test('the page, the worker and the host take each forwarded option with its one type', () => {
    expectTypeOf<Pick<MemoryOptions, keyof ForwardedOptions>>().toEqualTypeOf<Partial<ForwardedOptions>>();
    expectTypeOf<Pick<WorkerOpenOptions, keyof ForwardedOptions>>().toEqualTypeOf<Partial<ForwardedOptions>>();
    expectTypeOf<Pick<HostOptions, keyof ForwardedOptions>>().toEqualTypeOf<SetForwardedOptions>();
  });

  test('every forwarded option is an engine option the engine takes as it crosses', () => {
    expectTypeOf<keyof ForwardedOptions>().toExtend<keyof EngineOptions>();
    expectTypeOf<SetForwardedOptions>().toExtend<Pick<EngineOptions, keyof ForwardedOptions>>();
  });
});
