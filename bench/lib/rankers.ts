/** The rankers the harness compares: Engram (any options) and its peers, all over the same memories and vectors. */
import { create, insertMultiple, search as oramaSearch } from '@orama/orama';
import MiniSearch from 'minisearch';
import { ENGLISH_STOP_WORDS, stemEnglish } from '../../src/internals.js';
import { createEngine, type Embedder, type Engine, type EngineOptions, type MemoryInput, type SearchOptions } from '../../src/index.js';
import { DEPTH, type Conversation, type Ranker } from './run.js';

export interface EngineVariant {
  /** Index-time options (stemming, similarity calibration, supersede...). */
  engine?: Partial<EngineOptions>;
  /** Search options over the defaults. */
  search?: Partial<SearchOptions>;
  /** Lexical only: no embedder at all. */
  noEmbedder?: boolean;
  /** Memories added without `meta.thread` (a notes app rather than a chat): no thread order to lean on. */
  noThreads?: boolean;
  /** Memories added without `createdAt`: one add call stamps them all with the same time, as notes saved at once. */
  noDates?: boolean;
  /** Each turn a minute after the one before it in its session (LoCoMo dates sessions, not turns), as a chat app stamps messages. */
  spacedDates?: boolean;
}

const TURN_STEP_MS = 60_000;

function spaced(memories: readonly MemoryInput[]): MemoryInput[] {
  let previous: number | undefined;
  let step = 0;
  return memories.map((memory) => {
    const at = Number(memory.createdAt);
    step = at === previous ? step + 1 : 0;
    previous = at;
    return { ...memory, createdAt: at + step * TURN_STEP_MS };
  });
}

/** The memory without `meta.thread` (and without a meta left empty by dropping it). */
function withoutThread(memory: MemoryInput): MemoryInput {
  if (memory.meta === undefined || !('thread' in memory.meta)) return memory;
  const { thread: _dropped, ...rest } = memory.meta;
  const copy: MemoryInput = { ...memory, meta: rest };
  if (Object.keys(rest).length === 0) delete copy.meta;
  return copy;
}

// Engines are built once per conversation and index-time settings, then shared by every variant that
// differs only in search options (adding a conversation embeds ~600 turns).
const engines = new Map<string, Promise<Engine>>();

function engineFor(conversation: Conversation, embedder: Embedder, variant: EngineVariant): Promise<Engine> {
  const key = JSON.stringify([conversation.name, variant.noEmbedder ?? false, variant.noThreads ?? false, variant.noDates ?? false, variant.spacedDates ?? false, variant.engine ?? {}]);
  let engine = engines.get(key);
  if (!engine) {
    engine = (async () => {
      const made = await createEngine({ ...variant.engine, embedder: variant.noEmbedder ? null : embedder, clock: () => conversation.lastSessionAt });
      let memories = variant.noThreads ? conversation.memories.map(withoutThread) : conversation.memories;
      if (variant.noDates) memories = memories.map(({ createdAt: _dropped, ...rest }) => rest);
      else if (variant.spacedDates) memories = spaced(memories);
      await made.add(memories);
      return made;
    })();
    engines.set(key, engine);
  }
  return engine;
}

export async function closeEngines(): Promise<void> {
  for (const engine of engines.values()) await (await engine).close();
  engines.clear();
}

export function engineRanker(name: string, variant: EngineVariant = {}): Ranker {
  return {
    name,
    async prepare(conversation, embedder) {
      const engine = await engineFor(conversation, embedder, variant);
      return async (query, k) => (await engine.search(query, { ...variant.search, k })).hits.map((hit) => hit.id);
    },
  };
}

/** One leg on its own: no decay, no date boost, no diversity, no neighbour support, no currency, nothing touched. */
export const pureLeg: Partial<SearchOptions> = { decay: false, diversity: false, neighbours: false, feedback: false, dateBoost: 1, currency: false, touch: false };

export const minisearchDefaults: Ranker = {
  name: 'MiniSearch BM25 (defaults)',
  async prepare(conversation) {
    const index = new MiniSearch<{ id: string; text: string }>({ fields: ['text'] });
    index.addAll(conversation.memories.map((m) => ({ id: m.id!, text: m.text })));
    return async (query) => index.search(query).slice(0, DEPTH).map((r) => String(r.id));
  },
};

/**
 * Orama's hybrid search over the same texts and the same vectors. `tuned` gives its tokenizer the engine's
 * English stop words and Porter2 stemmer, the strongest Orama we could set up; otherwise Orama's defaults.
 */
export function oramaHybrid(tuned: boolean): Ranker {
  return {
    name: tuned ? 'Orama hybrid (+ stop words, stemming; same vectors)' : 'Orama hybrid (defaults, same vectors)',
    async prepare(conversation, embedder) {
      const vectors = await embedder.embed(conversation.memories.map((m) => m.text));
      const schema = { mid: 'string', text: 'string', embedding: `vector[${embedder.dim}]` } as const;
      const db = tuned
        ? create({ schema, components: { tokenizer: { language: 'english', stemming: true, stemmer: stemEnglish, stopWords: [...ENGLISH_STOP_WORDS] } } })
        : create({ schema });
      await insertMultiple(
        db,
        conversation.memories.map((m, i) => ({ mid: m.id!, text: m.text, embedding: Array.from(vectors[i]!) })),
      );
      return async (query) => {
        const [vector] = await embedder.embed([query]);
        const result = await oramaSearch(db, {
          mode: 'hybrid',
          term: query,
          vector: { value: Array.from(vector!), property: 'embedding' },
          similarity: 0,
          limit: DEPTH,
        });
        return result.hits.map((hit) => (hit.document as { mid: string }).mid);
      };
    },
  };
}
