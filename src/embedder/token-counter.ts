/**
 * countTokens for a transformers.js tokenizer. Encoding a long text costs about a millisecond and a half, and a
 * search's context counts every hit's text, so for BERT-style tokenizers (BertNormalizer, BertPreTokenizer,
 * WordPiece: the built-in model and most sentence embedders) the count is summed over the text's words instead,
 * each word counted once and remembered. That sum is the same number: such a tokenizer splits at every space, tab
 * and line break and keeps nothing of them, and none of its steps looks across one (the normaliser works per
 * character, lower-casing's final sigma and NFD stop at a space, added tokens hold no whitespace). Other tokenizers
 * (byte-level BPE keeps the space in the next token, SentencePiece marks it) encode the whole text.
 */
import { memoizeByText } from '../util/memo.js';

/** What this reads of a transformers.js tokenizer: `encode`, and the parsed tokenizer.json and tokenizer_config.json. */
export interface EncodingTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): number[];
  _tokenizerJSON?: unknown;
  _tokenizerConfig?: unknown;
}

/** The whitespace a BERT pre-tokenizer splits at and drops (a subset of it is enough: the sum is exact at any). */
const WORD_BREAK = /[ \t\n\r]+/;
/**
 * The ideographs a BertNormalizer with `handle_chinese_chars` puts spaces around (its ranges): Chinese and Japanese
 * text has no spaces, so its words are cut there too, and each ideograph is counted once and remembered. Cutting
 * inside a run of kana or Thai is not exact (WordPiece reads the whole run: an unknown run is one [UNK]), so word
 * segmentation (Intl.Segmenter) cannot serve here; those runs are counted whole.
 */
const IDEOGRAPH = String.raw`[\u{3400}-\u{4DBF}\u{4E00}-\u{9FFF}\u{F900}-\u{FAFF}\u{20000}-\u{2A6DF}\u{2A700}-\u{2CEAF}\u{2F800}-\u{2FA1F}]`;
const HAS_IDEOGRAPH = new RegExp(IDEOGRAPH, 'u');
const WORD_BREAK_OR_IDEOGRAPH = new RegExp(`[ \\t\\n\\r]+|(${IDEOGRAPH})`, 'u');

/** The words of `text` whose counts add up to the whole text's. */
function wordsOf(text: string, ideographs: boolean): string[] {
  if (!ideographs || !HAS_IDEOGRAPH.test(text)) return text.split(WORD_BREAK);
  // split() puts each captured ideograph between the pieces, undefined where whitespace matched.
  return text.split(WORD_BREAK_OR_IDEOGRAPH).filter((word): word is string => word !== undefined);
}
/** Distinct words remembered (a long-document corpus of a few thousand abstracts has about 70,000). */
const WORD_MEMO_LIMIT = 100_000;

interface AddedToken {
  id: number;
  content: string;
  special?: boolean;
  normalized?: boolean;
}

/**
 * The added token that separates words when unseen ones are encoded in one call, or null when this tokenizer's
 * count is not a sum over words. The separator is a special token matched before normalisation, so it comes out as
 * exactly one token of its own id, which no word yields unless the word contains its text.
 */
function wordSeparator(tokenizer: EncodingTokenizer): AddedToken | null {
  const json = tokenizer._tokenizerJSON as
    | { normalizer?: { type?: string; handle_chinese_chars?: boolean } | null; pre_tokenizer?: { type?: string } | null; model?: { type?: string; unk_token?: string }; post_processor?: { type?: string } | null; added_tokens?: AddedToken[] }
    | undefined;
  const config = (tokenizer._tokenizerConfig ?? {}) as { remove_space?: boolean; do_lowercase_and_remove_accent?: boolean };
  if (!json || typeof json !== 'object') return null;
  if (json.normalizer && json.normalizer.type !== 'BertNormalizer') return null;
  if (json.pre_tokenizer?.type !== 'BertPreTokenizer' || json.model?.type !== 'WordPiece') return null;
  if (json.post_processor && json.post_processor.type !== 'TemplateProcessing' && json.post_processor.type !== 'BertProcessing') return null;
  if (config.remove_space === true || config.do_lowercase_and_remove_accent === true) return null;
  const added = Array.isArray(json.added_tokens) ? json.added_tokens : [];
  if (added.some((t) => typeof t?.content !== 'string' || /\s/.test(t.content))) return null;
  const separator = added.find((t) => t.special === true && t.normalized !== true && t.content !== '' && t.content !== json.model?.unk_token && /\p{P}/u.test(t.content));
  if (!separator) return null;
  // The separator must encode alone as itself (guards against a tokenizer that reads its config differently).
  const ids = tokenizer.encode(` ${separator.content} `, { add_special_tokens: false });
  return ids.length === 1 && ids[0] === separator.id ? separator : null;
}

/** The number of tokens of a text under `tokenizer`, without special tokens: `encode(text).length`, computed faster where that is exact. */
export function tokenCounter(tokenizer: EncodingTokenizer): (text: string) => number {
  const encodeCount = (text: string) => tokenizer.encode(text, { add_special_tokens: false }).length;
  const separator = wordSeparator(tokenizer);
  if (!separator) return encodeCount;
  const normalizer = (tokenizer._tokenizerJSON as { normalizer?: { handle_chinese_chars?: boolean } | null }).normalizer;
  // transformers.js puts spaces around ideographs only when the option is true (absent: false).
  const ideographs = normalizer?.handle_chinese_chars === true;
  const words = new Map<string, number>();
  const countAlone = memoizeByText(encodeCount, WORD_MEMO_LIMIT);
  const glue = ` ${separator.content} `;
  return (text) => {
    let total = 0;
    const unseen: string[] = [];
    const pending = new Map<string, number>();
    for (const word of wordsOf(text, ideographs)) {
      if (word === '') continue;
      const known = words.get(word);
      if (known !== undefined) total += known;
      else if (word.includes(separator.content)) total += countAlone(word);
      else {
        const seen = pending.get(word);
        if (seen === undefined) unseen.push(word);
        pending.set(word, (seen ?? 0) + 1);
      }
    }
    if (unseen.length === 0) return total;
    // Unseen words in one encode call, separated by the separator token (per-call overhead dominates a word).
    const ids = tokenizer.encode(unseen.join(glue), { add_special_tokens: false });
    const counts: number[] = [0];
    for (const id of ids) {
      if (id === separator.id) counts.push(0);
      else counts[counts.length - 1]!++;
    }
    if (counts.length !== unseen.length) return total + unseen.reduce((n, word) => n + countAlone(word) * (pending.get(word) as number), 0);
    if (words.size + unseen.length > WORD_MEMO_LIMIT) words.clear();
    unseen.forEach((word, i) => {
      words.set(word, counts[i] as number);
      total += (counts[i] as number) * (pending.get(word) as number);
    });
    return total;
  };
}
