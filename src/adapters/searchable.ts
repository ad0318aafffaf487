/** What the adapters need of a Memory or an Engine: both answer `search`, `add` and `remove` the same way. */
import { EngramError, ErrorCode } from '../errors.js';
import { checkSearchOptionKeys } from '../search/option-keys.js';
import type { SearchOptions } from '../search/options.js';
import { checkKnownKeys } from '../util/keys.js';
import type { MemoryInput, SearchResult } from '../types.js';

/**
 * `RemoteSearchOptions` (what both a Memory and an Engine take), spelled without the client's module: the LangChain
 * and AI SDK adapters run in Node beside `createEngine`, and reach no client code, types included.
 */
export type AdapterSearchOptions = Omit<SearchOptions, 'boost'>;

/** A `Memory` (`createMemory`) or an `Engine` (`createEngine`): only `search` is needed. */
export interface SearchableMemory {
  search(query: string, options?: Partial<AdapterSearchOptions>): Promise<SearchResult>;
}

/** A `Memory` or an `Engine` that can also write: the AI SDK tools remember and forget. */
export interface WritableMemory extends SearchableMemory {
  add(input: MemoryInput | MemoryInput[]): Promise<string[]>;
  remove(ids: string | string[]): Promise<number>;
}

/** Fails at construction, not at the first call inside a framework's chain, where the cause is harder to see. */
export function checkMemory(memory: unknown, methods: readonly string[], where: string): void {
  const missing = methods.filter((name) => typeof (memory as Record<string, unknown> | null)?.[name] !== 'function');
  if (missing.length > 0) {
    throw new EngramError(ErrorCode.INVALID_INPUT, `${where}: memory must be a Memory or an Engine (missing ${missing.join(', ')})`);
  }
}

/**
 * An adapter's own options (`keys`) and the search options among them, refused by name when misspelt at
 * construction: inside a framework's chain a typo would otherwise do nothing, or fail far from its cause.
 */
export function checkAdapterOptions(options: unknown, keys: readonly string[], where: string): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new EngramError(ErrorCode.INVALID_INPUT, `${where}: options must be an object`);
  checkKnownKeys(options, keys, { noun: `${where} option` });
  checkSearchOptionKeys((options as { searchOptions?: unknown; search?: unknown }).searchOptions ?? (options as { search?: unknown }).search);
}
