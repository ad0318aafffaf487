/**
 * The JSON files transformers.js reads next to a BERT-style ONNX model: tokenizer.json, tokenizer_config.json
 * and config.json. Shared by the built-in GloVe model and the tiny random BERT fixture.
 */

/** Ids 0..4, in the order BERT checkpoints use; the ONNX tables give these rows special meaning (zero for GloVe). */
export const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const;
export const PAD_ID = 0;
export const CLS_ID = 2;
export const SEP_ID = 3;

export interface BertFilesSpec {
  /** Every token, specials first (use `withSpecialTokens`). Index = token id. */
  vocab: readonly string[];
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  intermediateSize: number;
  maxPositions: number;
  /** Truncation length the tokenizer applies. */
  modelMaxLength: number;
  /** Free-form provenance written under config.json's `engram` key. */
  provenance: Record<string, unknown>;
}

export function withSpecialTokens(words: readonly string[]): string[] {
  return [...SPECIAL_TOKENS, ...words];
}

function specialToken(token: string, id: number) {
  return { id, content: token, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
}

/**
 * WordPiece, not WordLevel: transformers.js's tokenizer silently mishandles WordLevel models (our probe).
 * With no `##` pieces in the vocab, a word that is not in it becomes one [UNK], which is what we want.
 */
export function tokenizerJson(vocab: readonly string[]): string {
  const vocabMap: Record<string, number> = {};
  vocab.forEach((token, id) => {
    vocabMap[token] = id;
  });
  const cls = { SpecialToken: { id: '[CLS]', type_id: 0 } };
  const sep = (typeId: number) => ({ SpecialToken: { id: '[SEP]', type_id: typeId } });
  return JSON.stringify({
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((token, id) => specialToken(token, id)),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [cls, { Sequence: { id: 'A', type_id: 0 } }, sep(0)],
      pair: [cls, { Sequence: { id: 'A', type_id: 0 } }, sep(0), { Sequence: { id: 'B', type_id: 1 } }, sep(1)],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [CLS_ID], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [SEP_ID], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: vocabMap,
    },
  });
}

export function tokenizerConfigJson(spec: Pick<BertFilesSpec, 'modelMaxLength'>): string {
  return JSON.stringify(
    {
      tokenizer_class: 'BertTokenizer',
      do_lower_case: true,
      model_max_length: spec.modelMaxLength,
      clean_up_tokenization_spaces: true,
      pad_token: '[PAD]',
      unk_token: '[UNK]',
      cls_token: '[CLS]',
      sep_token: '[SEP]',
      mask_token: '[MASK]',
    },
    null,
    2,
  );
}

export function configJson(spec: BertFilesSpec): string {
  return JSON.stringify(
    {
      model_type: 'bert',
      architectures: ['BertModel'],
      vocab_size: spec.vocab.length,
      hidden_size: spec.hiddenSize,
      num_hidden_layers: spec.numLayers,
      num_attention_heads: spec.numHeads,
      intermediate_size: spec.intermediateSize,
      max_position_embeddings: spec.maxPositions,
      type_vocab_size: 2,
      pad_token_id: PAD_ID,
      engram: spec.provenance,
    },
    null,
    2,
  );
}
