/**
 * Several tabs, one database. Each tab's worker asks for a Web Lock named after the database; the holder is the
 * leader: the only one that opens SQLite and hosts the engine, so every tab searches the same in-memory indexes
 * and sees every write at once. The others are followers: they send each call to the leader and wait for its
 * answer. When the leader's tab goes away its lock is released, the next worker in the lock queue opens the
 * database and announces itself, and followers re-send the calls still unanswered (an `add` re-sent this way is
 * recognised if it had been committed, see Host.call).
 *
 * Channels. Any script of the origin can open a BroadcastChannel by name, read everything posted on it and post
 * anything. So the group channel (named after the lock) carries only ids and public keys, and every message on it is
 * shape-checked (a malformed one is ignored and counted, `status().rejectedMessages`). Calls and answers travel on a
 * pair channel between one follower and the leader, named from an ECDH secret the two derive from each other's
 * public key: a script reading the group channel cannot compute the name, so it never sees another tab's calls or
 * answers (an `export`, say). A per-call MessageChannel would be simpler, but a BroadcastChannel cannot transfer a
 * port, and a reply channel named by a random id would have to travel on the group channel, where anyone can read
 * it. A follower switches to a new leader only when that leader welcomes it on their pair channel, which needs the
 * leader's private key: a forged announcement (an id and a key nobody answers for) changes nothing. Limit: a script
 * that runs this protocol in full (its own keys, answering joins) can still pose as a leader to tabs that have none;
 * calls then end in TIMEOUT, never hang.
 *
 * Why not a SharedWorker: it cannot use OPFS synchronous access handles, and Chrome on Android has none.
 */
import { EngramError, ErrorCode, toEngramError } from '../src/errors.js';
import { newId } from '../src/util/ids.js';
import { closedError, fromWireError, isWireError, timeoutError, toWireError, type CallTimeouts, type WireError } from '../src/client/protocol.js';
import { timeoutFor } from '../src/client/methods.js';
import type { Progress } from '../src/types.js';
import { InFlight } from '../src/util/in-flight.js';
import type { Host } from './host.js';

/** On the group channel, readable by every script of the origin: ids and public keys only. */
type GroupMessage =
  /** A worker looking for the leader: the leader announces itself again. */
  | { t: 'who' }
  | { t: 'leader'; id: string; key: Uint8Array }
  /** A follower's public key: the leader opens their pair channel and welcomes it there. */
  | { t: 'join'; key: Uint8Array };

/** From the leader to one follower, on their pair channel. */
type FromLeader =
  | { t: 'welcome'; id: string }
  | { t: 'leaving' }
  | { t: 'progress'; seq: number; progress: Progress }
  | { t: 'done'; seq: number; value?: unknown; error?: WireError };

/** From one follower to the leader, on their pair channel. `stack`: the caller opted in to error stacks. */
type ToLeader = { t: 'call'; seq: number; method: string; args: unknown[]; retry: boolean; stack: boolean };

interface Pending {
  method: string;
  args: unknown[];
  onProgress: ((progress: Progress) => void) | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** The leader it was last sent to, or null when not sent yet. */
  sentTo: string | null;
  timeoutMs: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface Peer {
  channel: BroadcastChannel;
  lastUsed: number;
}

export interface GroupOptions {
  timeouts: CallTimeouts;
  /** Ask the leader for error stacks (`MemoryOptions.debug`). */
  debug: boolean;
}

/** Followers the leader keeps a pair channel open for; past this, the least recently active is asked to re-join. */
const MAX_PEERS = 64;
/** Leaders a follower is waiting to be welcomed by at once (more means someone is posting forged announcements). */
const MAX_CANDIDATES = 4;

/** Joins the group of workers sharing `lockName`; resolves once there is a leader (possibly this worker). */
export async function joinGroup(lockName: string, startHost: () => Promise<Host>, options: GroupOptions): Promise<Host> {
  const member = new Member(lockName, startHost, options, await makeKeys());
  await member.join();
  return member;
}

class Member implements Host {
  private readonly id = newId();
  private readonly group: BroadcastChannel;
  private readonly abort = new AbortController();
  private host: Host | null = null;
  /** The leader this follower was welcomed by, and their pair channel. */
  private leader: { id: string; channel: BroadcastChannel } | null = null;
  /**
   * Announced leaders this follower asked to join, by id and key (a forged announcement may reuse a real leader's
   * id), until one welcomes it.
   */
  private readonly candidates = new Map<string, BroadcastChannel>();
  /** As leader: each follower's pair channel, by its public key. */
  private readonly peers = new Map<string, Peer>();
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private rejected = 0;
  /** Calls this worker is running for followers: a closing leader finishes them before letting go. */
  private readonly serving = new InFlight();
  private releaseLock: () => void = () => undefined;
  private failure: unknown = null;
  private closed = false;
  private onLeader: () => void = () => undefined;

  constructor(
    private readonly lockName: string,
    private readonly startHost: () => Promise<Host>,
    private readonly options: GroupOptions,
    private readonly keys: Keys,
  ) {
    this.group = new BroadcastChannel(lockName);
    this.group.onmessage = (event: MessageEvent<unknown>) => this.guarded(() => this.receiveGroup(event.data));
    this.group.onmessageerror = () => this.rejected++;
  }

  async join(): Promise<void> {
    const held = new Promise<void>((resolve) => (this.releaseLock = resolve));
    const leading = await new Promise<boolean>((resolve, reject) => {
      navigator.locks
        .request(this.lockName, { ifAvailable: true }, async (lock) => {
          resolve(lock !== null);
          if (lock) await held;
        })
        .catch(reject);
    });
    if (leading) {
      try {
        await this.lead();
      } catch (error) {
        this.close().catch(() => undefined);
        throw error;
      }
      return;
    }
    // Follower: find the leader, and queue for the lock so this worker takes over if the leader's tab closes.
    const found = new Promise<void>((resolve) => (this.onLeader = resolve));
    navigator.locks
      .request(this.lockName, { signal: this.abort.signal }, async () => {
        await this.lead().catch((error: unknown) => this.fail(error));
        await held;
      })
      .catch(() => undefined); // aborted by close()
    this.post(this.group, { t: 'who' });
    // The leader may be rebuilding a large index before it announces itself: opening has its own, longer timeout.
    const waitMs = this.options.timeouts.openMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs)));
    const outcome = await Promise.race([found, late]);
    clearTimeout(timer);
    if (outcome === 'late') {
      await this.close().catch(() => undefined);
      throw timeoutError('open', waitMs, 'the tab holding the database');
    }
    if (this.failure) throw this.failure;
  }

  call(method: string, args: unknown[], onProgress?: (progress: Progress) => void): Promise<unknown> {
    if (this.closed) return Promise.reject(closedError());
    if (this.failure) return Promise.reject(this.failure);
    if (this.host) return this.host.call(method, args, onProgress).then((value) => this.withCount(method, value));
    return new Promise((resolve, reject) => {
      const seq = ++this.seq;
      const timeoutMs = timeoutFor(method, this.options.timeouts);
      this.pending.set(seq, { method, args, onProgress, resolve, reject, sentTo: null, timeoutMs, timer: undefined });
      this.arm(seq);
      this.send(seq);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    this.rejectPending(closedError());
    try {
      if (this.host) {
        // Answer what followers already sent, then hand over: a call arriving now stays pending on its follower
        // and is re-sent to the next leader.
        await this.serving.settled();
        await this.host.close();
        for (const peer of this.peers.values()) this.post(peer.channel, { t: 'leaving' } satisfies FromLeader);
      }
    } finally {
      this.releaseLock();
      for (const peer of this.peers.values()) peer.channel.close();
      this.peers.clear();
      this.dropLeader();
      this.group.close();
    }
  }

  /** Opens the database here and serves every follower, including the calls this worker had pending. */
  private async lead(): Promise<void> {
    if (this.closed) return;
    this.host = await this.startHost();
    this.dropLeader();
    for (const [seq, call] of this.pending) {
      this.pending.delete(seq);
      clearTimeout(call.timer);
      this.host.call(call.method, call.args, call.onProgress, call.sentTo !== null).then((value) => call.resolve(this.withCount(call.method, value)), call.reject);
    }
    this.post(this.group, { t: 'leader', id: this.id, key: this.keys.publicRaw } satisfies GroupMessage);
    this.onLeader();
  }

  private fail(error: unknown): void {
    this.failure = error instanceof EngramError ? error : new EngramError(ErrorCode.WORKER_FAILED, `could not take over the database: ${String(error)}`);
    this.rejectPending(this.failure);
    this.onLeader();
  }

  /** Ends every call still waiting for an answer with `error`. */
  private rejectPending(error: unknown): void {
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
      call.reject(error);
    }
    this.pending.clear();
  }

  /** `status` answers with this tab's own count of ignored messages, whichever tab answered the rest. */
  private withCount(method: string, value: unknown): unknown {
    return method === 'status' && typeof value === 'object' && value !== null ? { ...value, rejectedMessages: this.rejected } : value;
  }

  /** (Re)starts the call's timeout: a call with no answer (and no progress) for its timeout rejects with TIMEOUT. */
  private arm(seq: number): void {
    const call = this.pending.get(seq);
    if (!call) return;
    clearTimeout(call.timer);
    call.timer = setTimeout(() => {
      this.pending.delete(seq);
      call.reject(timeoutError(call.method, call.timeoutMs, 'the tab holding the database'));
      // The leader may be gone without a word (or announcements were drowned out): look for it again.
      if (!this.host && !this.closed) this.post(this.group, { t: 'who' });
    }, call.timeoutMs);
  }

  private send(seq: number): void {
    const call = this.pending.get(seq);
    if (!call || !this.leader) return; // sent when a leader welcomes this worker
    const retry = call.sentTo !== null;
    call.sentTo = this.leader.id;
    try {
      this.post(this.leader.channel, { t: 'call', seq, method: call.method, args: call.args, retry, stack: this.options.debug } satisfies ToLeader);
    } catch (error) {
      this.pending.delete(seq);
      clearTimeout(call.timer);
      call.reject(toEngramError(error, ErrorCode.INVALID_INPUT, `the arguments of ${call.method}() cannot be sent to the tab holding the database`));
    }
  }

  /**
   * Runs a message handler so that nothing it throws escapes: an exception in a worker's event handler reaches the
   * page as the worker's `error` event, which ends the Memory for good.
   */
  private guarded(handle: () => void): void {
    try {
      handle();
    } catch (error) {
      this.rejected++;
      console.warn('Engram: a channel message could not be handled', error);
    }
  }

  private dropLeader(): void {
    this.leader?.channel.close();
    this.leader = null;
    for (const channel of this.candidates.values()) channel.close();
    this.candidates.clear();
  }

  private receiveGroup(data: unknown): void {
    if (this.closed) return;
    if (!isGroupMessage(data)) {
      this.rejected++;
      return;
    }
    switch (data.t) {
      case 'who':
        if (this.host) this.post(this.group, { t: 'leader', id: this.id, key: this.keys.publicRaw } satisfies GroupMessage);
        return;
      case 'leader':
        if (!this.host && data.id !== this.leader?.id && !this.candidates.has(candidateKey(data.id, data.key))) void this.askToJoin(data.id, data.key);
        return;
      case 'join':
        if (this.host) void this.welcome(data.key);
    }
  }

  /** Follower: opens the pair channel with an announced leader and asks to join; it counts only once welcomed. */
  private async askToJoin(leaderId: string, leaderKey: Uint8Array): Promise<void> {
    const name = await pairName(this.lockName, this.keys, leaderKey).catch(() => null);
    if (name === null) {
      this.rejected++; // not a key on the curve
      return;
    }
    const candidate = candidateKey(leaderId, leaderKey);
    if (this.closed || this.host || this.candidates.has(candidate) || this.leader?.id === leaderId) return;
    const channel = new BroadcastChannel(name);
    channel.onmessage = (event: MessageEvent<unknown>) => this.guarded(() => this.receiveFromLeader(leaderId, candidate, channel, event.data));
    channel.onmessageerror = () => this.rejected++;
    this.candidates.set(candidate, channel);
    for (const [id, old] of this.candidates) {
      if (this.candidates.size <= MAX_CANDIDATES) break;
      old.close();
      this.candidates.delete(id);
    }
    this.post(this.group, { t: 'join', key: this.keys.publicRaw } satisfies GroupMessage);
  }

  /** Leader: opens (or reuses) the pair channel with a follower and welcomes it there. */
  private async welcome(followerKey: Uint8Array): Promise<void> {
    const name = await pairName(this.lockName, this.keys, followerKey).catch(() => null);
    if (name === null) {
      this.rejected++;
      return;
    }
    if (this.closed || !this.host) return;
    const peerId = bytesToBase64Url(followerKey);
    let peer = this.peers.get(peerId);
    if (!peer) {
      const channel = new BroadcastChannel(name);
      const opened: Peer = { channel, lastUsed: performance.now() };
      channel.onmessage = (event: MessageEvent<unknown>) => this.guarded(() => this.receiveFromFollower(opened, event.data));
      channel.onmessageerror = () => this.rejected++;
      this.peers.set(peerId, opened);
      peer = opened;
      if (this.peers.size > MAX_PEERS) this.evictIdlestPeer();
    }
    peer.lastUsed = performance.now();
    this.post(peer.channel, { t: 'welcome', id: this.id } satisfies FromLeader);
  }

  /** Too many followers (or a script posting joins): the least recently active is told to re-join, as after a handover. */
  private evictIdlestPeer(): void {
    let idlest: [string, Peer] | null = null;
    for (const entry of this.peers) if (!idlest || entry[1].lastUsed < idlest[1].lastUsed) idlest = entry;
    if (!idlest) return;
    this.post(idlest[1].channel, { t: 'leaving' } satisfies FromLeader);
    idlest[1].channel.close();
    this.peers.delete(idlest[0]);
  }

  private receiveFromLeader(leaderId: string, candidate: string, channel: BroadcastChannel, data: unknown): void {
    if (this.closed) return;
    if (!isFromLeader(data) || (data.t === 'welcome' && data.id !== leaderId)) {
      this.rejected++;
      return;
    }
    const current = this.leader?.id === leaderId;
    switch (data.t) {
      case 'welcome':
        if (this.host) return;
        if (!current) {
          // A leader that holds its private key: the one to follow (the previous one, if any, is gone).
          this.leader?.channel.close();
          this.candidates.delete(candidate);
          this.leader = { id: leaderId, channel };
        }
        for (const seq of this.pending.keys()) if (!current || this.pending.get(seq)?.sentTo === null) this.send(seq);
        this.onLeader();
        return;
      case 'leaving':
        channel.close();
        if (current) {
          this.leader = null;
          this.post(this.group, { t: 'who' }); // the next leader may already be announced
        } else this.candidates.delete(candidate);
        return;
      case 'progress': {
        const call = this.pending.get(data.seq);
        if (!current || call?.sentTo !== leaderId) return;
        this.arm(data.seq);
        call.onProgress?.(data.progress);
        return;
      }
      case 'done': {
        const call = this.pending.get(data.seq);
        if (!current || call?.sentTo !== leaderId) return; // late: timed out, or re-sent elsewhere
        this.pending.delete(data.seq);
        clearTimeout(call.timer);
        if (data.error) call.reject(fromWireError(data.error));
        else call.resolve(this.withCount(call.method, data.value));
      }
    }
  }

  private receiveFromFollower(peer: Peer, data: unknown): void {
    if (this.closed) return;
    if (!isToLeader(data)) {
      this.rejected++;
      return;
    }
    if (!this.host) return;
    peer.lastUsed = performance.now();
    this.serve(this.host, peer.channel, data);
  }

  private serve(host: Host, channel: BroadcastChannel, { seq, method, args, retry, stack }: ToLeader): void {
    const onProgress = (progress: Progress) => this.post(channel, { t: 'progress', seq, progress } satisfies FromLeader);
    // host.call refuses any method outside the Memory API with INVALID_INPUT.
    const answer = (error: unknown) => this.post(channel, { t: 'done', seq, error: toWireError(error, stack) } satisfies FromLeader);
    const run = host.call(method, args, onProgress, retry).then(
      (value) => {
        try {
          this.post(channel, { t: 'done', seq, value } satisfies FromLeader);
        } catch (error) {
          answer(toEngramError(error, ErrorCode.WORKER_FAILED, `the answer of ${method}() could not be sent to the calling tab`));
        }
      },
      (error: unknown) => answer(error),
    );
    void this.serving.track(run);
  }

  /** Posting on a channel closed meanwhile (an evicted follower, a closing worker) is dropped, not thrown. */
  private post(channel: BroadcastChannel, message: GroupMessage | FromLeader | ToLeader): void {
    try {
      channel.postMessage(message);
    } catch (error) {
      if (!(error instanceof DOMException && error.name === 'InvalidStateError')) throw error;
    }
  }
}

// ---- keys and shapes --------------------------------------------------------------------------------------------

interface Keys {
  pair: CryptoKeyPair;
  /** The public key, uncompressed P-256 point (65 bytes): what travels on the group channel. */
  publicRaw: Uint8Array;
}

const CURVE = { name: 'ECDH', namedCurve: 'P-256' } as const;

async function makeKeys(): Promise<Keys> {
  const pair = (await crypto.subtle.generateKey(CURVE, false, ['deriveBits'])) as CryptoKeyPair;
  return { pair, publicRaw: new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey)) };
}

/** The pair channel's name: a hash of the ECDH secret, which only the two key holders can compute. */
async function pairName(lockName: string, own: Keys, peerRaw: Uint8Array): Promise<string> {
  const peer = await crypto.subtle.importKey('raw', peerRaw as Uint8Array<ArrayBuffer>, CURVE, false, []);
  const secret = new Uint8Array(await crypto.subtle.deriveBits({ name: 'ECDH', public: peer }, own.pair.privateKey, 256));
  const label = new TextEncoder().encode(`engram pair channel\0${lockName}\0`);
  const input = new Uint8Array(label.length + secret.length);
  input.set(label);
  input.set(secret, label.length);
  return `${lockName}:pair:${bytesToBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', input)))}`;
}

function candidateKey(leaderId: string, leaderKey: Uint8Array): string {
  return `${leaderId} ${bytesToBase64Url(leaderKey)}`;
}

function bytesToBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const isId = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= 100;
const isSeq = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;
/** An uncompressed P-256 point; whether it is on the curve is checked when it is imported. */
const isKey = (value: unknown): value is Uint8Array => value instanceof Uint8Array && value.length === 65 && value[0] === 4;

function isGroupMessage(data: unknown): data is GroupMessage {
  if (!isObject(data)) return false;
  switch (data.t) {
    case 'who':
      return true;
    case 'leader':
      return isId(data.id) && isKey(data.key);
    case 'join':
      return isKey(data.key);
    default:
      return false;
  }
}

function isFromLeader(data: unknown): data is FromLeader {
  if (!isObject(data)) return false;
  switch (data.t) {
    case 'welcome':
      return isId(data.id);
    case 'leaving':
      return true;
    case 'progress':
      return isSeq(data.seq) && isObject(data.progress) && typeof data.progress.done === 'number' && typeof data.progress.total === 'number';
    case 'done':
      return isSeq(data.seq) && (data.error === undefined || isWireError(data.error));
    default:
      return false;
  }
}

function isToLeader(data: unknown): data is ToLeader {
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
