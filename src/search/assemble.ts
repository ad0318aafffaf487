/**
 * Greedy token-budgeted context. Walk the items in the order given (the hits best first, or a diverse search's
 * thread order from diverse-sessions.ts); add each whole memory whose block still fits in what is left of the
 * budget; skip one that does not and keep trying the rest (a smaller one further down may still fit). Never breaks
 * early, never truncates a memory.
 *
 * Each memory becomes one block `[YYYY-MM-DD] text` (its creation date, UTC; just `text` when the stored date is
 * not a valid one); blocks are joined by a blank line. A block costs countTokens(block), plus countTokens(SEPARATOR) when it is not the first. Without an
 * embedder tokenizer the estimate is ceil(length / 4) UTF-16 code units: the usual rule of thumb for English
 * with GPT-style BPE tokenizers (it under-counts CJK and emoji-heavy text).
 */
import type { AssembledContext } from '../types.js';

export const SEPARATOR = '\n\n';

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export interface AssembleItem {
  id: string;
  text: string;
  createdAt: number;
}

/**
 * A record read from an old database may hold a date the engine now refuses (NaN, beyond ±8.64e15): its block
 * then has no date rather than making toISOString throw and the whole search fail.
 */
export function formatBlock(item: AssembleItem): string {
  const date = new Date(item.createdAt);
  if (Number.isNaN(date.getTime())) return item.text;
  const iso = date.toISOString(); // years beyond 0-9999 have six digits and a sign: cut at the T, not at 10
  return `[${iso.slice(0, iso.indexOf('T'))}] ${item.text}`;
}

/** countTokens of an item's block. */
export type BlockTokens = (item: AssembleItem) => number;

/**
 * countTokens of each item's block, remembered per item object (a record, the same object search after search while
 * it stays in memory): otherwise every search formats each hit's block anew and counts or hashes its whole text.
 * An item whose text or date changed since is counted again.
 */
export function blockTokenCounter(countTokens: (text: string) => number): BlockTokens {
  const counted = new WeakMap<AssembleItem, { text: string; createdAt: number; tokens: number }>();
  return (item) => {
    const known = counted.get(item);
    if (known && known.text === item.text && Object.is(known.createdAt, item.createdAt)) return known.tokens;
    const tokens = countTokens(formatBlock(item));
    counted.set(item, { text: item.text, createdAt: item.createdAt, tokens });
    return tokens;
  };
}

export function assemble(
  items: readonly AssembleItem[],
  budget: number,
  countTokens: (text: string) => number = estimateTokens,
  blockTokens: BlockTokens = (item) => countTokens(formatBlock(item)),
): AssembledContext {
  const separatorCost = countTokens(SEPARATOR);
  const blocks: string[] = [];
  const ids: string[] = [];
  let tokens = 0;
  for (const item of items) {
    const cost = blockTokens(item) + (blocks.length > 0 ? separatorCost : 0);
    if (tokens + cost > budget) continue;
    blocks.push(formatBlock(item));
    ids.push(item.id);
    tokens += cost;
  }
  return { text: blocks.join(SEPARATOR), tokens, budget, ids };
}
