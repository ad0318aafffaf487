/**
 * tokenCounter: the word-wise count of BERT-style tokenizers equals encoding the whole text, on the built-in model's
 * tokenizer and the tiny BERT's (both built by scripts/ensure-model.ts); other tokenizers encode the whole text.
 */
import { AutoTokenizer, env } from '@huggingface/transformers';
import { describe, expect, test } from 'vitest';
import { tokenCounter, type EncodingTokenizer } from '../../../src/embedder/token-counter.js';
import { MODELS_ROOT } from '../../../scripts/models/index.js';

async function tokenizer(model: string): Promise<EncodingTokenizer> {
  const saved = { localModelPath: env.localModelPath, allowRemoteModels: env.allowRemoteModels };
  env.localModelPath = MODELS_ROOT;
  env.allowRemoteModels = false;
  try {
    return (await AutoTokenizer.from_pretrained(model)) as unknown as EncodingTokenizer;
  } finally {
    Object.assign(env, saved);
  }
}

const TEXTS = [
  '',
  ' \n\t\r ',
  'The cat sits on the mat.',
  'Café naïve ΣΑΣ ΌΔΟΣ ΑΣ.Β ΑΣ Β Ǆ ß İstanbul ﬁne',
  'a\u00a0b c\u200bd e\ufeff f \u2028line\u2029para\u3000ideo\u2003em',
  '中文字符 テスト 한국어 😀 👍🏽',
  '[UNK] a[UNK]b [CLS][SEP] [MASK]x [SEP] x[SEP]y [SEP][SEP]',
  'x\u0000y \ufffd z\u0007 e\u0301 \u0301e \u200b \u200b\u200b',
  `${'a'.repeat(150)} ${'b'.repeat(99)} don't "quote" (paren) $100 <tag> a^b \`x\` ~y`,
  'Statins and breast cancer:\na cohort study of 12,345 women (2001-2010); HR 0.91 [95% CI 0.85-0.98].',
  // Chinese, Japanese and Thai: no spaces between words; ideographs beside kana, Latin, digits and punctuation.
  '我喜欢吃苹果和香蕉。今天天气很好，我们去公园吧！',
  '東京の天気は晴れです。明日はテーブルを買いに行きます。iPhone15を3台、𠮷野家で',
  'วันนี้อากาศดีมาก ฉันจะไปตลาดพรุ่งนี้ ราคา 100 บาท',
  '豈更車 兀嗀 㐀㐁 漢\u0301字 a漢b 1漢2 [SEP]漢[SEP]',
];

describe('tokenCounter', () => {
  for (const model of ['engram/glove-100d', 'engram/tiny-random-bert']) {
    test(`${model}: the word-wise count equals encode(text).length, words seen or not`, async () => {
      const tok = await tokenizer(model);
      const encoded = (text: string) => tok.encode(text, { add_special_tokens: false }).length;
      const count = tokenCounter(tok);
      const all = [...TEXTS, TEXTS.join(' '), TEXTS.join('\n')];
      for (const text of [...all, ...all]) expect(count(text), JSON.stringify(text)).toBe(encoded(text));
      // Words are remembered: a text of seen words is not encoded again.
      let calls = 0;
      const spied = tokenCounter({ ...tok, encode: (text, options) => (calls++, tok.encode(text, options)) } as EncodingTokenizer);
      spied('the cat sat on the mat');
      const before = calls;
      expect(spied('the mat sat on the cat')).toBe(encoded('the mat sat on the cat'));
      expect(calls).toBe(before);
      // Ideographs are words of their own: a Chinese or Japanese text of seen ones is not encoded again.
      spied('東京の天気は晴れです');
      const seen = calls;
      expect(spied('天気は東京')).toBe(encoded('天気は東京'));
      expect(calls).toBe(seen);
    });
  }

  test('a tokenizer whose count is not a sum over words encodes the whole text', () => {
    const seen: string[] = [];
    const byteLevel: EncodingTokenizer = {
      encode: (text) => (seen.push(text), Array.from(text, () => 0)),
      _tokenizerJSON: { normalizer: null, pre_tokenizer: { type: 'ByteLevel' }, model: { type: 'BPE' }, added_tokens: [] },
    };
    expect(tokenCounter(byteLevel)('two words')).toBe(9);
    expect(seen).toEqual(['two words']);
  });
});
