/**
 * Deterministic benchmark corpus: memories of 10-60 words drawn from a Zipfian English vocabulary (real words in
 * frequency order), grouped into topics, dated over two years, with clustered 384-d unit vectors that agree
 * with the text (a bag-of-words model on top of topic centroids and a shared direction, like real sentence
 * embeddings, which are anisotropic). Runs unchanged in Node and in the browser: it only needs the word list.
 *
 * Memory i depends only on (seed, i), so the 1k corpus is the first thousand memories of the 100k corpus.
 */

export const SYNTHETIC_DIM = 384;
export const VOCABULARY_SIZE = 30_000;
export const TOPIC_COUNT = 256;
const TOPIC_WORDS = 40;
/** Real English word frequencies fall off as 1/rank. */
const ZIPF_EXPONENT = 1.0;
/** Share of a memory's words taken from its topic's own words. */
const TOPIC_WORD_SHARE = 0.3;
/** SIF weight a / (a + p(w)): very common words barely move a vector, as in the built-in model. */
const SIF_A = 1e-3;
/** Mixing weights of the shared direction, the topic centroid and the text's own words. */
const SHARED_WEIGHT = 0.5;
const TOPIC_WEIGHT = 1.0;
const WORDS_WEIGHT = 1.0;

/** Fixed "now" of every run, so decay and dates never depend on the day the bench runs. */
export const BENCH_NOW = Date.UTC(2025, 0, 1);
const TWO_YEARS_MS = 2 * 365 * 24 * 3600 * 1000;

export interface Corpus {
  n: number;
  dim: number;
  ids: string[];
  texts: string[];
  createdAt: Float64Array;
  topics: Uint16Array;
  /** n × dim, row-major, each row L2-normalised. */
  vectors: Float32Array;
}

export type QueryKind = 'topical' | 'rare' | 'question' | 'common' | 'stopwords' | 'paragraph' | 'zipf' | 'common-4' | 'paragraph-64';

/** The query sets every system is timed on: the fixed set, and issue 16's Zipfian worst-case set. */
export type QuerySetName = 'standard' | 'worst-case';
export const QUERY_SETS: readonly QuerySetName[] = ['standard', 'worst-case'];

/** Size of the worst-case set: one query in ten is the four most frequent words, one in twenty a 64-term paragraph. */
export const WORST_CASE_QUERY_COUNT = 40;
/** Distinct indexed terms of a worst-case paragraph: the lexical leg reads at most 64 terms of a query. */
export const PARAGRAPH_TERMS = 64;

/** What the lexical leg keeps of a word: the stop list and the stemmer (passed in, so this module stays pure). */
export interface TermRules {
  stopWords: ReadonlySet<string>;
  stem: (word: string) => string;
}

export interface BenchQuery {
  name: string;
  kind: QueryKind;
  text: string;
  /** Synthetic 384-d query vector (same model as the corpus). */
  vector: Float32Array;
  /** Which query set it belongs to; absent = 'standard'. */
  set?: QuerySetName;
}

/** Kinds that are the worst cases for one leg or the other: they must be inside the p99. */
export const WORST_CASE_KINDS: readonly QueryKind[] = ['common', 'stopwords', 'paragraph', 'common-4', 'paragraph-64'];

export function querySet(queries: readonly BenchQuery[], set: QuerySetName): BenchQuery[] {
  return queries.filter((q) => (q.set ?? 'standard') === set);
}

/** sfc32: small, fast and identical in every JS engine. */
export function prng(seed: number): () => number {
  let a = 0x9e3779b9 ^ seed;
  let b = 0x243f6a88 ^ Math.imul(seed, 0x85ebca6b);
  let c = 0xb7e15162 ^ Math.imul(seed, 0xc2b2ae35);
  let d = 1;
  const next = (): number => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return next;
}

function gaussian(random: () => number): number {
  const u = 1 - random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

function randomUnit(random: () => number, dim: number): Float32Array {
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = gaussian(random);
  return normalise(v);
}

export function normalise(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  const scale = sum > 0 ? 1 / Math.sqrt(sum) : 0;
  for (let i = 0; i < v.length; i++) v[i]! *= scale;
  return v;
}

/** Keeps plain lowercase words, in the list's frequency order. */
export function vocabularyFrom(words: readonly string[], size = VOCABULARY_SIZE): string[] {
  const out: string[] = [];
  for (const word of words) {
    if (/^[a-z]+$/.test(word)) out.push(word);
    if (out.length === size) break;
  }
  if (out.length < size) throw new Error(`bench: word list has only ${out.length} plain words, need ${size}`);
  return out;
}

/** The generative model shared by corpus and queries: vocabulary, Zipf sampler, topics, word vectors. */
export class World {
  readonly vocabulary: string[];
  readonly dim: number;
  private readonly rank = new Map<string, number>();
  private readonly cdf: Float64Array;
  private readonly sif: Float32Array;
  private readonly topicWords: Uint32Array[];
  private readonly topicCdf: Float64Array;
  private readonly centroids: Float32Array[];
  private readonly shared: Float32Array;
  private readonly wordVectors: Float32Array;

  constructor(words: readonly string[], readonly seed = 7, dim = SYNTHETIC_DIM) {
    this.dim = dim;
    this.vocabulary = vocabularyFrom(words);
    this.vocabulary.forEach((word, i) => this.rank.set(word, i));
    const v = this.vocabulary.length;
    this.cdf = zipfCdf(v, ZIPF_EXPONENT);
    this.sif = new Float32Array(v);
    for (let r = 0; r < v; r++) this.sif[r] = SIF_A / (SIF_A + (this.cdf[r]! - (r > 0 ? this.cdf[r - 1]! : 0)));
    this.topicCdf = zipfCdf(TOPIC_WORDS, ZIPF_EXPONENT);

    const random = prng(seed);
    this.shared = randomUnit(random, dim);
    this.centroids = [];
    this.topicWords = [];
    for (let t = 0; t < TOPIC_COUNT; t++) {
      this.centroids.push(randomUnit(random, dim));
      // Topic words are mid-frequency: content words, not "the" and not hapaxes.
      const ids = new Uint32Array(TOPIC_WORDS);
      for (let j = 0; j < TOPIC_WORDS; j++) ids[j] = 200 + Math.floor(random() * 19_800);
      this.topicWords.push(ids);
    }
    this.wordVectors = new Float32Array(v * dim);
    for (let i = 0; i < this.wordVectors.length; i++) this.wordVectors[i] = gaussian(random);
  }

  /** One word by global frequency. */
  private zipfWord(random: () => number): number {
    return sampleCdf(this.cdf, random());
  }

  private topicWord(topic: number, random: () => number): number {
    return this.topicWords[topic]![sampleCdf(this.topicCdf, random())]!;
  }

  /** Word ids of a text of `length` words about `topics` (one or more). */
  wordsFor(topics: readonly number[], length: number, random: () => number, topicShare = TOPIC_WORD_SHARE): number[] {
    const out: number[] = [];
    for (let i = 0; i < length; i++) {
      const topic = topics[Math.floor(random() * topics.length)]!;
      out.push(random() < topicShare ? this.topicWord(topic, random) : this.zipfWord(random));
    }
    return out;
  }

  /** Sentences of 6-15 words, capitalised, with a full stop: looks like text a person wrote. */
  render(wordIds: readonly number[], random: () => number): string {
    const parts: string[] = [];
    let sentenceLeft = 0;
    for (let i = 0; i < wordIds.length; i++) {
      let word = this.vocabulary[wordIds[i]!]!;
      if (sentenceLeft === 0) {
        word = word[0]!.toUpperCase() + word.slice(1);
        sentenceLeft = 6 + Math.floor(random() * 10);
      }
      sentenceLeft--;
      if (sentenceLeft === 0 || i === wordIds.length - 1) word += '.';
      parts.push(word);
    }
    return parts.join(' ');
  }

  /** Shared direction + topic centroids + SIF-weighted word vectors, normalised. Writes into `out`. */
  embed(wordIds: readonly number[], topics: readonly number[], out: Float32Array, topicWeight = TOPIC_WEIGHT): Float32Array {
    const dim = this.dim;
    const table = this.wordVectors;
    const words = new Float32Array(dim);
    for (const id of wordIds) {
      const weight = this.sif[id]!;
      const base = id * dim;
      for (let k = 0; k < dim; k++) words[k] = words[k]! + weight * table[base + k]!;
    }
    normalise(words);
    const shared = this.shared;
    for (let k = 0; k < dim; k++) out[k] = SHARED_WEIGHT * shared[k]! + WORDS_WEIGHT * words[k]!;
    const perTopic = topics.length > 0 ? topicWeight / Math.sqrt(topics.length) : 0;
    for (const topic of topics) {
      const centroid = this.centroids[topic]!;
      for (let k = 0; k < dim; k++) out[k] = out[k]! + perTopic * centroid[k]!;
    }
    return normalise(out);
  }

  /** Word ids of free text (the words this world knows). */
  tokenize(text: string): number[] {
    const out: number[] = [];
    for (const word of text.toLowerCase().split(/[^a-z]+/)) {
      const id = this.rank.get(word);
      if (id !== undefined) out.push(id);
    }
    return out;
  }

  memory(i: number): { text: string; createdAt: number; topic: number; wordIds: number[] } {
    const random = prng(hashSeed(this.seed, i));
    const topic = Math.floor(random() * TOPIC_COUNT);
    const length = 10 + Math.floor(random() * 51);
    const wordIds = this.wordsFor([topic], length, random);
    const text = this.render(wordIds, random);
    // Skewed towards recent: people add more than they did a year ago.
    const age = TWO_YEARS_MS * Math.pow(random(), 1.5);
    return { text, createdAt: Math.round(BENCH_NOW - age), topic, wordIds };
  }

  corpus(n: number): Corpus {
    const dim = this.dim;
    const corpus: Corpus = {
      n,
      dim,
      ids: new Array<string>(n),
      texts: new Array<string>(n),
      createdAt: new Float64Array(n),
      topics: new Uint16Array(n),
      vectors: new Float32Array(n * dim),
    };
    for (let i = 0; i < n; i++) {
      const m = this.memory(i);
      corpus.ids[i] = `m${i}`;
      corpus.texts[i] = m.text;
      corpus.createdAt[i] = m.createdAt;
      corpus.topics[i] = m.topic;
      this.embed(m.wordIds, [m.topic], corpus.vectors.subarray(i * dim, (i + 1) * dim));
    }
    return corpus;
  }

  /** The fixed query set: typical short queries plus the worst cases of each leg. */
  queries(): BenchQuery[] {
    const random = prng(hashSeed(this.seed, 0x51e7));
    const out: BenchQuery[] = [];
    const add = (name: string, kind: QueryKind, text: string, topics: number[], topicWeight?: number): void => {
      const vector = this.embed(this.tokenize(text), topics, new Float32Array(this.dim), topicWeight);
      out.push({ name, kind, text, vector });
    };
    const word = (id: number): string => this.vocabulary[id]!;
    for (let q = 0; q < 16; q++) {
      const topic = Math.floor(random() * TOPIC_COUNT);
      const ids = this.wordsFor([topic], 2 + Math.floor(random() * 3), random, 0.6).filter((id) => id >= 100);
      ids.push(this.topicWord(topic, random));
      add(`topical-${q + 1}`, 'topical', ids.map(word).join(' '), [topic]);
    }
    for (let q = 0; q < 4; q++) {
      const topic = Math.floor(random() * TOPIC_COUNT);
      add(`rare-${q + 1}`, 'rare', word(this.topicWords[topic]![TOPIC_WORDS - 1 - q]!), [topic]);
    }
    for (let q = 0; q < 4; q++) {
      const topic = Math.floor(random() * TOPIC_COUNT);
      const a = word(this.topicWord(topic, random));
      const b = word(this.topicWord(topic, random));
      add(`question-${q + 1}`, 'question', `what did i say about the ${a} and ${b} last time?`, [topic]);
    }
    // Worst cases for the lexical leg: terms found in a large share of all memories.
    add('common-5', 'common', 'said new people year time', [], 0);
    add('common-10', 'common', 'people said the new year time first world two state', [], 0);
    add('stopwords', 'stopwords', 'the of and to in for that on is was', [], 0);
    // Worst case for everything: a long pasted paragraph touching three topics.
    const topics = [0, 1, 2].map(() => Math.floor(random() * TOPIC_COUNT));
    const paragraph = this.render(this.wordsFor(topics, 180, random), random);
    add('paragraph-180w', 'paragraph', paragraph, topics);
    return out;
  }

  /**
   * Issue 16's Zipfian worst-case set, deterministic from the seed: query q is the four most frequent words that
   * survive the stop list (in a shuffled order) when q % 10 = 0, a pasted paragraph about three topics holding
   * PARAGRAPH_TERMS distinct indexed terms when q % 20 = 5, and otherwise an ordinary query of 2-6 words drawn
   * like a memory's words (Zipfian, 30% from one topic), stop words included.
   */
  worstCaseQueries(rules: TermRules, count = WORST_CASE_QUERY_COUNT): BenchQuery[] {
    const random = prng(hashSeed(this.seed, 0x16_16));
    const out: BenchQuery[] = [];
    const add = (name: string, kind: QueryKind, text: string, topics: number[], topicWeight?: number): void => {
      const vector = this.embed(this.tokenize(text), topics, new Float32Array(this.dim), topicWeight);
      out.push({ name, kind, text, vector, set: 'worst-case' });
    };
    const common = this.mostFrequentIndexed(rules, 4);
    for (let q = 0; q < count; q++) {
      if (q % 10 === 0) {
        const words = [...common];
        for (let i = words.length - 1; i > 0; i--) {
          const j = Math.floor(random() * (i + 1));
          [words[i], words[j]] = [words[j]!, words[i]!];
        }
        add(`zipf-${q + 1}-common-4`, 'common-4', words.join(' '), [], 0);
      } else if (q % 20 === 5) {
        const topics = [0, 1, 2].map(() => Math.floor(random() * TOPIC_COUNT));
        const ids: number[] = [];
        const terms = new Set<string>();
        while (terms.size < PARAGRAPH_TERMS) {
          const id = this.wordsFor(topics, 1, random)[0]!;
          ids.push(id);
          const word = this.vocabulary[id]!;
          if (!rules.stopWords.has(word)) terms.add(rules.stem(word));
        }
        add(`zipf-${q + 1}-paragraph-64`, 'paragraph-64', this.render(ids, random), topics);
      } else {
        const topic = Math.floor(random() * TOPIC_COUNT);
        const ids = this.wordsFor([topic], 2 + Math.floor(random() * 5), random);
        add(`zipf-${q + 1}`, 'zipf', ids.map((id) => this.vocabulary[id]!).join(' '), [topic]);
      }
    }
    return out;
  }

  /** The `count` most frequent words whose indexed terms are distinct and not stop words. */
  mostFrequentIndexed(rules: TermRules, count: number): string[] {
    const out: string[] = [];
    const terms = new Set<string>();
    for (const word of this.vocabulary) {
      if (rules.stopWords.has(word) || terms.has(rules.stem(word))) continue;
      terms.add(rules.stem(word));
      out.push(word);
      if (out.length === count) break;
    }
    return out;
  }
}

function zipfCdf(size: number, exponent: number): Float64Array {
  const cdf = new Float64Array(size);
  let sum = 0;
  for (let r = 0; r < size; r++) {
    sum += 1 / Math.pow(r + 1, exponent);
    cdf[r] = sum;
  }
  for (let r = 0; r < size; r++) cdf[r]! /= sum;
  return cdf;
}

function sampleCdf(cdf: Float64Array, u: number): number {
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cdf[mid]! < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function hashSeed(seed: number, i: number): number {
  let h = Math.imul(seed ^ 0x27d4eb2d, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca77);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h >>> 0;
}

/** The first n memories of a larger corpus (memory i never depends on the corpus size). */
export function prefix(corpus: Corpus, n: number): Corpus {
  if (n > corpus.n) throw new Error(`bench: corpus has ${corpus.n} memories, asked for ${n}`);
  return {
    n,
    dim: corpus.dim,
    ids: corpus.ids.slice(0, n),
    texts: corpus.texts.slice(0, n),
    createdAt: corpus.createdAt.subarray(0, n),
    topics: corpus.topics.subarray(0, n),
    vectors: corpus.vectors.subarray(0, n * corpus.dim),
  };
}

/** Queries as plain JSON (vectors as number arrays), for handing to the page. */
export interface QueryJson {
  name: string;
  kind: QueryKind;
  text: string;
  vector: number[];
}

export function queriesToJson(queries: readonly BenchQuery[]): QueryJson[] {
  return queries.map((q) => ({ ...q, vector: Array.from(q.vector) }));
}

export function queriesFromJson(json: readonly QueryJson[]): BenchQuery[] {
  return json.map((q) => ({ ...q, vector: Float32Array.from(q.vector) }));
}

/** Cached corpus files: `<stem>.json` (texts, dates, topics) and `<stem>.f32` (vectors). */
export interface CorpusJson {
  texts: string[];
  createdAt: number[];
  topics: number[];
}

export function corpusFromParts(json: CorpusJson, vectors: Float32Array, dim: number): Corpus {
  const n = json.texts.length;
  return {
    n,
    dim,
    ids: Array.from({ length: n }, (_, i) => `m${i}`),
    texts: json.texts,
    createdAt: Float64Array.from(json.createdAt),
    topics: Uint16Array.from(json.topics),
    vectors,
  };
}
