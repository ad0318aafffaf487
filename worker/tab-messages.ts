/**
 * What the tabs' workers post to each other (worker/leader.ts): on the group channel, which every script of the
 * origin can read and post on, and on a follower's pair channel with the leader. Every message is shape-checked
 * before it is read; a malformed one is ignored and counted.
 */
import { isWireError, type WireError } from '../src/contract/protocol.js';
import type { Progress } from '../src/types.js';

/** On the group channel, readable by every script of the origin: ids and public keys only. */
export type GroupMessage =
  /** A worker looking for the leader: the leader announces itself again. */
  | { t: 'who' }
  /** `at` and `proof`: for an encrypted database, when it was signed (epoch ms) and the leader's HMAC (`announceInput`). */
  | { t: 'leader'; id: string; key: Uint8Array; at?: number; proof?: Uint8Array }
  /**
   * A follower's public key, for the leader of id `to`: it opens their pair channel and welcomes it there. `proof`:
   * for an encrypted database, the follower's HMAC over both keys (see `proofInput`).
   */
  | { t: 'join'; to: string; key: Uint8Array; proof?: Uint8Array };

/** From the leader to one follower, on their pair channel. */
export type FromLeader =
  | { t: 'welcome'; id: string; proof?: Uint8Array }
  | { t: 'leaving' }
  /** The database locked itself after idle (worker/idle-lock.ts): the follower forgets its passphrase. */
  | { t: 'locked' }
  | { t: 'pong'; n: number }
  | { t: 'progress'; seq: number; progress: Progress }
  | { t: 'done'; seq: number; value?: unknown; error?: WireError };

/** From one follower to the leader, on their pair channel. `stack`: the caller opted in to error stacks. */
export type ToLeader =
  | { t: 'call'; seq: number; method: string; args: unknown[]; retry: boolean; stack: boolean }
  | { t: 'ping'; n: number }
  /** The follower's page aborted call `seq` (its signal, or its timeout): the leader aborts the signal it runs with. */
  | { t: 'abort'; seq: number };
export type Call = Extract<ToLeader, { t: 'call' }>;
export type Done = Extract<FromLeader, { t: 'done' }>;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const isId = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= 100;
const isSeq = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;
/** An uncompressed P-256 point; whether it is on the curve is checked when it is imported. */
const isKey = (value: unknown): value is Uint8Array => value instanceof Uint8Array && value.length === 65 && value[0] === 4;
/** An HMAC-SHA-256 tag, or none (a plain database). */
const isProof = (value: unknown): value is Uint8Array | undefined => value === undefined || (value instanceof Uint8Array && value.length === 32);

export function isGroupMessage(data: unknown): data is GroupMessage {
  if (!isObject(data)) return false;
  switch (data.t) {
    case 'who':
      return true;
    case 'leader':
      return isId(data.id) && isKey(data.key) && isProof(data.proof) && (data.at === undefined || Number.isSafeInteger(data.at));
    case 'join':
      return isId(data.to) && isKey(data.key) && isProof(data.proof);
    default:
      return false;
  }
}

export function isFromLeader(data: unknown): data is FromLeader {
  if (!isObject(data)) return false;
  switch (data.t) {
    case 'welcome':
      return isId(data.id) && isProof(data.proof);
    case 'leaving':
    case 'locked':
      return true;
    case 'pong':
      return isSeq(data.n);
    case 'progress':
      return isSeq(data.seq) && isObject(data.progress) && typeof data.progress.done === 'number' && typeof data.progress.total === 'number';
    case 'done':
      return isSeq(data.seq) && (data.error === undefined || isWireError(data.error));
    default:
      return false;
  }
}

export function isToLeader(data: unknown): data is ToLeader {
  if (isObject(data) && data.t === 'ping') return isSeq(data.n);
  if (isObject(data) && data.t === 'abort') return isSeq(data.seq);
  return (
    isObject(data) &&
    data.t === 'call' &&
    isSeq(data.seq) &&
    typeof data.method === 'string' &&
    data.method.length <= 100 &&
    Array.isArray(data.args) &&
    typeof data.retry === 'boolean' &&
    typeof data.stack === 'boolean'
  );
}
