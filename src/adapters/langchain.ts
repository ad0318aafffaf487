/** `engram/langchain`: a LangChain.js retriever over a Memory or an Engine. Needs `@langchain/core` (a peer). */
import { Document } from '@langchain/core/documents';
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import type { Hit } from '../types.js';
import { checkSearchOptionKeys } from '../search/option-keys.js';
import { checkMemory, type AdapterSearchOptions, type SearchableMemory } from './searchable.js';

export type { SearchableMemory } from './searchable.js';

export interface EngramRetrieverInput extends BaseRetrieverInput {
  /** A `Memory` (`createMemory`) or an `Engine` (`createEngine`). */
  memory: SearchableMemory;
  /** Options for every search (`k`, `project`, `filter`, …). Default the engine's. */
  searchOptions?: Partial<AdapterSearchOptions>;
}

/** Each document's metadata: the hit's id, score and explanation, and when the memory was made (epoch ms). */
export interface EngramDocumentMetadata {
  id: string;
  score: number;
  explain: Hit['explain'];
  createdAt: number;
}

/**
 * A `BaseRetriever`: each query is one Engram search, each hit a `Document` (the memory's text as `pageContent`).
 *
 * @example
 * ```ts
 * const retriever = new EngramRetriever({ memory, searchOptions: { k: 4 } });
 * const docs = await retriever.invoke('where is staging hosted?');
 * ```
 */
export class EngramRetriever extends BaseRetriever<EngramDocumentMetadata> {
  static override lc_name(): string {
    return 'EngramRetriever';
  }

  lc_namespace = ['engram', 'retrievers'];

  readonly memory: SearchableMemory;
  readonly searchOptions: Partial<AdapterSearchOptions>;

  constructor(fields: EngramRetrieverInput) {
    super(fields);
    checkMemory(fields?.memory, ['search'], 'EngramRetriever');
    // Only the search options: the other fields are LangChain's own (callbacks, tags, metadata, verbose).
    checkSearchOptionKeys(fields.searchOptions);
    this.memory = fields.memory;
    this.searchOptions = fields.searchOptions ?? {};
  }

  override async _getRelevantDocuments(query: string): Promise<Document<EngramDocumentMetadata>[]> {
    const { hits } = await this.memory.search(query, this.searchOptions);
    return hits.map(
      (hit) =>
        new Document<EngramDocumentMetadata>({
          id: hit.id,
          pageContent: hit.text,
          metadata: { id: hit.id, score: hit.score, explain: hit.explain, createdAt: hit.memory.createdAt },
        }),
    );
  }
}
