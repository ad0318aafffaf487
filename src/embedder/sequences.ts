/**
 * Token sequences for a model run: a text's token ids cut to the model's length in chunks that each keep the
 * tokenizer's leading and final special tokens ([CLS] … [SEP], … EOS) and the prompt, then padded into one batch.
 * Plain truncation would drop the final special token, which last-token pooling reads and every model was trained with.
 */

/** How many special tokens the tokenizer puts before and after a text's own tokens. */
export interface Framing {
  prefix: number;
  suffix: number;
}

export interface Chunk {
  ids: number[];
  /** The text's own tokens in this chunk: its weight when the chunks' vectors are merged. */
  weight: number;
}

/**
 * `ids` (special tokens included) as one sequence when it fits in `maxTokens`, else as chunks of at most
 * `maxTokens`, each with the same special tokens and the first `head` text tokens (the prompt) in front.
 */
export function chunkIds(ids: readonly number[], framing: Framing, maxTokens: number, head = 0): Chunk[] {
  const bodyStart = framing.prefix + head;
  const bodyEnd = ids.length - framing.suffix;
  if (ids.length <= maxTokens) return [{ ids: ids.slice(), weight: Math.max(1, bodyEnd - framing.prefix) }];
  const before = ids.slice(0, bodyStart);
  const after = ids.slice(Math.max(bodyStart, bodyEnd));
  const room = maxTokens - before.length - after.length;
  // A prompt too long to share the length with the text is cut with it instead of repeated.
  if (room < 1 || bodyEnd <= bodyStart) {
    return head > 0 ? chunkIds(ids, framing, maxTokens, 0) : [{ ids: [...ids.slice(0, maxTokens - after.length), ...after], weight: 1 }];
  }
  const chunks: Chunk[] = [];
  for (let start = bodyStart; start < bodyEnd; start += room) {
    const body = ids.slice(start, Math.min(start + room, bodyEnd));
    chunks.push({ ids: [...before, ...body, ...after], weight: body.length });
  }
  return chunks;
}

/** Sequences padded to the longest with `padId`, on the tokenizer's side, as int64 ids and attention mask. */
export function padBatch(sequences: readonly number[][], padId: number, side: 'left' | 'right'): { ids: BigInt64Array; mask: BigInt64Array; length: number } {
  const length = Math.max(1, ...sequences.map((s) => s.length));
  const ids = new BigInt64Array(sequences.length * length).fill(BigInt(padId));
  const mask = new BigInt64Array(sequences.length * length);
  sequences.forEach((sequence, b) => {
    const offset = b * length + (side === 'left' ? length - sequence.length : 0);
    sequence.forEach((id, s) => {
      ids[offset + s] = BigInt(id);
      mask[offset + s] = 1n;
    });
  });
  return { ids, mask, length };
}
