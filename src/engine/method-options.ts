/**
 * The option names of the engine's methods that take an options object, and the fields of a conversation message,
 * each checked against its type (a field added to the type fails to compile until it is added here): a misspelt name
 * is refused by name with the one meant, before the method runs.
 */
import type { ConsolidateOptions, ConversationMessage, RememberOptions, TimelineOptions, WhyOptions } from '../types.js';
import { checkSignal } from '../util/abort.js';
import { checkKnownKeys, keysOf, type KeySet } from '../util/keys.js';
import type { AddOptions } from './api.js';

const TIMELINE_KEYS = keysOf<TimelineOptions>({ before: true, after: true } satisfies KeySet<TimelineOptions>);
const WHY_KEYS = keysOf<WhyOptions>({ depth: true, direction: true } satisfies KeySet<WhyOptions>);
const LINK_KEYS = keysOf<{ confidence?: number }>({ confidence: true });
const ADD_KEYS = keysOf<AddOptions>({ onProgress: true, signal: true } satisfies KeySet<AddOptions>);
const REMEMBER_KEYS = keysOf<RememberOptions>({ storeTurns: true, at: true, timeoutMs: true, project: true, scope: true, supersedePinned: true, maxFacts: true, signal: true } satisfies KeySet<RememberOptions>);
const MESSAGE_KEYS = keysOf<ConversationMessage>({ role: true, content: true, at: true } satisfies KeySet<ConversationMessage>);
const CONSOLIDATE_KEYS = keysOf<ConsolidateOptions>({
  summarize: true,
  clusterSimilarity: true,
  minCluster: true,
  maxCluster: true,
  maxClusters: true,
  timeoutMs: true,
  supersedePinned: true,
  signal: true,
} satisfies KeySet<ConsolidateOptions>);

const METHOD_KEYS = { timeline: TIMELINE_KEYS, why: WHY_KEYS, link: LINK_KEYS, add: ADD_KEYS, import: ADD_KEYS, remember: REMEMBER_KEYS, consolidate: CONSOLIDATE_KEYS } as const;

/** The methods whose options take `signal` (an AbortSignal, checked as such). */
const ABORTABLE: ReadonlySet<string> = new Set(['add', 'import', 'remember', 'consolidate']);

/**
 * INVALID_INPUT for an option `method` does not have (`{ limit }` for `before`, say), or a `signal` that is not an
 * AbortSignal.
 */
export function checkMethodOptionKeys(method: keyof typeof METHOD_KEYS, options: unknown): void {
  checkKnownKeys(options, METHOD_KEYS[method], { noun: `${method} option`, aliases: { hops: 'depth', timeout: 'timeoutMs', date: 'at', turns: 'storeTurns', abortsignal: 'signal', progress: 'onProgress', onprogress: 'onProgress' } });
  if (ABORTABLE.has(method) && typeof options === 'object' && options !== null) checkSignal((options as { signal?: unknown }).signal, method);
}

/** INVALID_INPUT for a field a conversation message does not have (`{ text }` for `content`, say). */
export function checkMessageKeys(conversation: unknown): void {
  if (!Array.isArray(conversation)) return;
  conversation.forEach((message, i) => checkKnownKeys(message, MESSAGE_KEYS, { noun: 'field', prefix: `remember: messages[${i}].`, aliases: { text: 'content', message: 'content', speaker: 'role', author: 'role', time: 'at', createdat: 'at', date: 'at' } }));
}

/** `run()`, or a rejected promise when `check` throws: a method that returns a promise never throws instead. */
export function checkedFirst<T>(check: () => void, run: () => Promise<T>): Promise<T> {
  try {
    check();
  } catch (error) {
    return Promise.reject(error);
  }
  return run();
}
