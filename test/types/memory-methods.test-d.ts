/**
 * The Memory API's table (src/contract/methods.ts) and the `Memory` type agree: the table names exactly the Memory
 * methods that are engine calls, each with the engine's signature, and its writes are the methods that mutate.
 */
import { describe, expectTypeOf, test } from 'vitest';
import type { Engine, Memory, RemoteSearchOptions, SearchResult } from '../../src/index.js';
import type { AddOptions } from '../../src/engine/engine.js';
import type { MEMORY_METHODS, MethodName, ProgressMethod, WireArgs, WriteMethod } from '../../src/contract/methods.js';

/** Memory members the worker or the page answers itself, not the engine (`ready` polls `status`). */
type NotEngineCalls = 'status' | 'changePassphrase' | 'unlock' | 'close' | 'ready';
type Table = typeof MEMORY_METHODS;

/** The methods whose parameters include `{ onProgress }`, read off Engine rather than off the table. */
type TakesProgress = { [M in MethodName]: HasProgress<Parameters<Engine[M]>> extends true ? M : never }[MethodName];
type HasProgress<P extends unknown[]> = true extends { [I in keyof P]: 'onProgress' extends keyof NonNullable<P[I]> ? true : false }[number] ? true : false;

describe('MEMORY_METHODS and Memory', () => {
  test('the table names every Memory method that is an engine call, and nothing else', () => {
    expectTypeOf<MethodName>().toEqualTypeOf<Exclude<keyof Memory, NotEngineCalls>>();
    expectTypeOf<MethodName>().toMatchTypeOf<keyof Engine>();
  });

  test('each of them has the engine signature (search without the in-process boost hook)', () => {
    expectTypeOf<Pick<Memory, Exclude<MethodName, 'search'>>>().toEqualTypeOf<Pick<Engine, Exclude<MethodName, 'search'>>>();
    expectTypeOf<Memory['search']>().toEqualTypeOf<(query: string, options?: Partial<RemoteSearchOptions>) => Promise<SearchResult>>();
  });

  test('the writes are the methods that change memories or their links, and they get the write timeout', () => {
    expectTypeOf<WriteMethod>().toEqualTypeOf<'add' | 'import' | 'update' | 'remove' | 'pin' | 'link' | 'unlink' | 'remember' | 'consolidate' | 'syncNow' | 'rotateSyncKey'>();
    expectTypeOf<Table[WriteMethod]['timeout']>().toEqualTypeOf<'write'>();
    expectTypeOf<Table[Exclude<MethodName, WriteMethod>]['kind']>().toEqualTypeOf<'read'>();
  });

  test('progress is declared for exactly the engine methods that take { onProgress }, and it does not travel with the arguments', () => {
    expectTypeOf<ProgressMethod>().toEqualTypeOf<TakesProgress>();
    expectTypeOf<ProgressMethod>().toEqualTypeOf<'add' | 'import'>();
    expectTypeOf<Parameters<Engine['add']>[1]>().toEqualTypeOf<AddOptions | undefined>();
    expectTypeOf<WireArgs<'add'>>().toEqualTypeOf<[Parameters<Engine['add']>[0]]>();
    expectTypeOf<WireArgs<'link'>>().toEqualTypeOf<Parameters<Engine['link']>>();
  });
});
