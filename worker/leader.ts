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
 * leader's private key, and only when its current leader left (said `leaving`) or failed a liveness check on their
 * pair channel: a script running the whole protocol is not followed while the real leader lives. For an encrypted
 * database the join and the welcome each carry an HMAC under a key derived from the data key (`GroupOptions.auth`),
 * so only a tab that holds the data key is served or followed; the leader's announcements carry a dated one too, so a
 * follower ignores forged ones before any costly step. Every rate is spent only after the proof: a leader answers
 * `who` once per window, takes joins of new followers at a shared rate and each joined one's at its own, and a
 * follower asks at most a few announced leaders a second. A plain database has no such secret: any script
 * of the origin can join and call the Memory API, as it could by opening the database itself, and a tab that has
 * no leader yet (opening, or its leader left) follows whichever welcomes it first; answers are shape-checked
 * against the method table, not trusted further.
 *
 * Why not a SharedWorker: it cannot use OPFS synchronous access handles, and Chrome on Android has none.
 */
import { EngramError, ErrorCode, isEngramError, toEngramError } from '../src/errors.js';
import { newId } from '../src/util/ids.js';
import { closedError, fromWireError, timeoutError, toWireError, type CallTimeouts } from '../src/contract/protocol.js';
import { isAnswerOf, isPoll, isSealed, SECRET_METHODS, timeoutBetweenTabs, WRITE_METHODS, type WorkerMethodName } from '../src/contract/methods.js';
import type { Progress } from '../src/types.js';
import { InFlight } from '../src/util/in-flight.js';
import type { Host } from './host.js';
import { Bucket } from './rate.js';
import { announceInput, bytesToBase64Url, candidateKey, makeKeys, pairName, proofInput, sign, unlockInput, unlockKey, verify, type Keys } from './tab-keys.js';
import { isFromLeader, isGroupMessage, isToLeader, type Call, type Done, type FromLeader, type GroupMessage, type ToLeader } from './tab-messages.js';

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
  /** Its public key: an unlock it sends is sealed for this pair (`unlockKey`). */
  key: Uint8Array;
  lastUsed: number;
  /** Its calls this leader is running: a peer with any is never evicted. */
  busy: number;
  /** Its joins this leader takes again (a re-join, or the same join replayed by a script reading the group channel). */
  joins: Bucket;
}

export interface GroupOptions {
  timeouts: CallTimeouts;
  /** Ask the leader for error stacks (`MemoryOptions.debug`). */
  debug: boolean;
  /**
   * The HMAC key of an encrypted database's tab proofs (src/store/browser/keyring.ts `tabProofKey`), or null for a plain one.
   * Asked by a leader once its database is open, by a follower before it joins; what it throws (WRONG_KEY,
   * KEY_REQUIRED, NOT_ENCRYPTED) ends the join. Default: a plain database.
   */
  auth?: () => Promise<CryptoKey | null>;
  /**
   * The database locked itself after idle (this worker's host did, or the leader said so): the worker forgets its
   * passphrase or key, so a takeover cannot open the database again without `unlock`.
   */
  onLocked?: () => void;
}

/**
 * Followers the leader keeps a pair channel open for; past this, the least recently active one with no call running
 * is asked to re-join, and a join finding every one busy is refused.
 */
const MAX_PEERS = 64;
/** Leaders a follower is waiting to be welcomed by at once (more means someone is posting forged announcements). */
const MAX_CANDIDATES = 4;
/**
 * Joins from new followers a leader takes per second, and at once, counted after the proof (encrypted database), so
 * a script without the key cannot spend them: past the rate a join is dropped and counted, not served.
 */
const JOINS_PER_SECOND = 16;
/** Joins of one follower already joined (its retries, or replays of its join) a leader takes per second, and at once. */
const PEER_JOINS_PER_SECOND = 1;
const PEER_JOINS_AT_ONCE = 4;
/** A leader announces itself at most once per this (a flood of `who` gets one answer per window). */
const ANNOUNCE_MS = 250;
/** A signed announcement (encrypted database) older than this is refused: replaying a departed leader's does nothing. */
const ANNOUNCE_FRESH_MS = 10_000;
/** Announced leaders a follower asks to join per second, and at once, after the proof: forged announcements are dropped and counted. */
const CANDIDATES_PER_SECOND = 4;
/** A follower not yet welcomed repeats its join this often (a join may have been dropped), this many times. */
const JOIN_RETRY_MS = 1000;
const JOIN_RETRIES = 10;
/** How long a follower's leader has to answer a ping before another leader's welcome is believed. */
const LIVENESS_MS = 3000;
/**
 * Answers a leader keeps per follower, and followers it keeps answers for, so a retried call gets the original's:
 * a write's for good (they are small: ids, counts, records), a read's only while it runs (running one twice is harmless).
 */
const ANSWERS_PER_PEER = 64;
const ANSWER_PEERS = 2 * MAX_PEERS;
/** A takeover that failed for a reason that may pass (STORE_FAILED, QUOTA_EXCEEDED) is tried again this often. */
const TAKEOVER_RETRIES = 3;
const TAKEOVER_RETRY_MS = 1000;
/** Takeover failures no retry can mend: the tab's worker gives up its place and fails its calls with the error. */
const FINAL_FAILURES: ReadonlySet<string> = new Set([ErrorCode.WRONG_KEY, ErrorCode.KEY_REQUIRED, ErrorCode.NOT_ENCRYPTED, ErrorCode.SCHEMA_TOO_NEW]);

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
  /** The leader this follower was welcomed by, its public key, and their pair channel. */
  private leader: { id: string; key: Uint8Array; channel: BroadcastChannel } | null = null;
  /** The liveness check of the current leader under way, and the pong it waits for. */
  private liveness: { n: number; answered: () => void; result: Promise<boolean> } | null = null;
  private pings = 0;
  /** The tab proof key (GroupOptions.auth), asked once. */
  private authKey: Promise<CryptoKey | null> | null = null;
  /** Joins from new followers this leader takes, and announced leaders this follower asks to join. */
  private readonly newJoins = new Bucket(JOINS_PER_SECOND, JOINS_PER_SECOND);
  private readonly newCandidates = new Bucket(CANDIDATES_PER_SECOND, CANDIDATES_PER_SECOND);
  /** As leader: when it last announced itself, and the announcement waiting for the end of that window. */
  private announcedAt = -Infinity;
  private announceTimer: ReturnType<typeof setTimeout> | undefined;
  /** As follower: a `who` to post once a dropped announcement's tokens are back. */
  private askAgainTimer: ReturnType<typeof setTimeout> | undefined;
  /** As leader: answers given or being given, by follower key then sequence number (most recent last). */
  private readonly answers = new Map<string, Map<number, Promise<Done>>>();
  private takeoverFailures = 0;
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
    this.queueForLock(held);
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
    if (this.failure) {
      await this.close().catch(() => undefined);
      throw this.failure;
    }
  }

  /**
   * Waits for the lock; once granted, leads until closed. A takeover that fails gives the lock back at once (else the
   * other tabs would wait on a holder that serves nobody): the worker queues again, or gives up when retrying cannot
   * help (a passphrase changed in another tab: WRONG_KEY) or failed too often.
   */
  private queueForLock(held: Promise<void>): void {
    navigator.locks
      .request(this.lockName, { signal: this.abort.signal }, async () => {
        if (this.closed) return;
        try {
          await this.lead();
        } catch (error) {
          this.takeoverFailed(error, held);
          return;
        }
        await held;
      })
      .catch(() => undefined); // aborted by close()
  }

  private takeoverFailed(error: unknown, held: Promise<void>): void {
    const code = (error as { code?: unknown } | null)?.code;
    if ((typeof code === 'string' && FINAL_FAILURES.has(code)) || ++this.takeoverFailures > TAKEOVER_RETRIES) {
      this.fail(error);
      void this.close().catch(() => undefined);
      return;
    }
    setTimeout(() => {
      if (this.closed) return;
      this.queueForLock(held);
      this.post(this.group, { t: 'who' }); // another tab may have taken over meanwhile
    }, TAKEOVER_RETRY_MS);
  }

  call(method: string, args: unknown[], onProgress?: (progress: Progress) => void): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(closedError());
    if (this.host) return this.host.call(method, args, onProgress).then((value) => this.withCount(method, value));
    // Its secret stays in this tab's worker: never posted to the leader, nor kept to be re-sent after a handover.
    if (SECRET_METHODS.has(method)) return Promise.reject(notLeader(method, this.lockName));
    return new Promise((resolve, reject) => {
      const seq = ++this.seq;
      const timeoutMs = timeoutBetweenTabs(method, this.options.timeouts);
      this.pending.set(seq, { method, args, onProgress, resolve, reject, sentTo: null, timeoutMs, timer: undefined });
      this.arm(seq);
      this.send(seq);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    clearTimeout(this.announceTimer);
    clearTimeout(this.askAgainTimer);
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
      this.answers.clear();
      this.dropLeader();
      this.group.close();
    }
  }

  /**
   * Opens an idle-locked database again with `dataKey` (unwrapped in this worker from the passphrase its page gave,
   * and owned from here on). A follower sends it to the leader sealed under a key only the two of them can derive
   * (their ECDH secret), to the leader whose welcome proved it holds the same data key.
   */
  async unlock(dataKey: Uint8Array): Promise<void> {
    try {
      if (this.closed) throw closedError();
      if (this.host) {
        if (!this.host.unlock) throw new EngramError(ErrorCode.NOT_ENCRYPTED, 'this database is not encrypted: it never locks');
        return await this.host.unlock(dataKey.slice()); // the host owns its copy
      }
      const leader = this.leader;
      if (!leader) throw new EngramError(ErrorCode.WORKER_FAILED, 'unlock(): no tab holds the database at the moment; try again');
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const key = await unlockKey(this.lockName, this.keys, leader.key);
      const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: unlockInput(this.lockName, leader.id) }, key, dataKey as Uint8Array<ArrayBuffer>));
      await this.call('unlock' satisfies WorkerMethodName, [iv, sealed]);
    } finally {
      dataKey.fill(0);
    }
  }

  /** Leader: a follower's sealed unlock (see `unlock`). */
  private async unlockFor(peer: Peer, args: unknown[]): Promise<object> {
    const [iv, sealed] = args;
    if (!this.host?.unlock) throw new EngramError(ErrorCode.NOT_ENCRYPTED, 'this database is not encrypted: it never locks');
    if (!(iv instanceof Uint8Array) || iv.length !== 12 || !(sealed instanceof Uint8Array) || sealed.length > 64) throw new EngramError(ErrorCode.INVALID_INPUT, 'unlock(): malformed');
    const key = await unlockKey(this.lockName, this.keys, peer.key);
    let dataKey: Uint8Array;
    try {
      dataKey = new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: iv as Uint8Array<ArrayBuffer>, additionalData: unlockInput(this.lockName, this.id) }, key, sealed as Uint8Array<ArrayBuffer>));
    } catch {
      // Sealed for another leader: the database changed hands since the call was sent.
      throw new EngramError(ErrorCode.WORKER_FAILED, 'unlock(): the tab holding the database changed meanwhile; call it again');
    }
    await this.host.unlock(dataKey);
    return {};
  }

  /** Opens the database here and serves every follower, including the calls this worker had pending. */
  private async lead(): Promise<void> {
    if (this.closed) return;
    const host = await this.startHost();
    try {
      await this.auth();
    } catch (error) {
      await host.close().catch(() => undefined);
      throw error;
    }
    this.host = host;
    this.takeoverFailures = 0;
    host.onLock?.(() => {
      this.options.onLocked?.();
      for (const peer of this.peers.values()) this.post(peer.channel, { t: 'locked' } satisfies FromLeader);
    });
    this.dropLeader();
    for (const [seq, call] of this.pending) {
      this.pending.delete(seq);
      clearTimeout(call.timer);
      this.host.call(call.method, call.args, call.onProgress, call.sentTo !== null).then((value) => call.resolve(this.withCount(call.method, value)), call.reject);
    }
    this.announce();
    this.onLeader();
  }

  /** Leader: announces itself on the group channel now, or at the end of the current ANNOUNCE_MS window. */
  private announce(): void {
    if (this.announceTimer !== undefined) return;
    const wait = this.announcedAt + ANNOUNCE_MS - performance.now();
    if (wait > 0) {
      this.announceTimer = setTimeout(() => {
        this.announceTimer = undefined;
        this.announce();
      }, wait);
      return;
    }
    this.announcedAt = performance.now();
    void this.announcement().then(
      (message) => {
        if (this.host && !this.closed) this.post(this.group, message);
      },
      () => this.rejected++, // no proof key any more: nothing to announce
    );
  }

  private async announcement(): Promise<GroupMessage> {
    const proofKey = await this.auth();
    if (!proofKey) return { t: 'leader', id: this.id, key: this.keys.publicRaw };
    const at = Date.now();
    return { t: 'leader', id: this.id, key: this.keys.publicRaw, at, proof: await sign(proofKey, announceInput(this.lockName, this.id, this.keys.publicRaw, at)) };
  }

  private fail(error: unknown): void {
    this.failure ??= error instanceof EngramError ? error : new EngramError(ErrorCode.WORKER_FAILED, `could not take over the database: ${String(error)}`);
    this.rejectPending(this.failure);
    this.onLeader();
  }

  /** The tab proof key, asked once; a failure is not kept, so a later takeover asks again. */
  private auth(): Promise<CryptoKey | null> {
    if (this.authKey) return this.authKey;
    const key = this.options.auth?.() ?? Promise.resolve(null);
    this.authKey = key;
    key.catch(() => {
      if (this.authKey === key) this.authKey = null;
    });
    return key;
  }

  /** Ends every call still waiting for an answer with `error`. */
  private rejectPending(error: unknown): void {
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
      call.reject(error);
    }
    this.pending.clear();
  }

  /** A poll (`status`) answers with this tab's own count of ignored messages and role, whichever tab answered the rest. */
  private withCount(method: string, value: unknown): unknown {
    return isPoll(method) && typeof value === 'object' && value !== null ? { ...value, rejectedMessages: this.rejected, leader: this.host !== null } : value;
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
    this.liveness?.answered();
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
        if (this.host) this.announce();
        return;
      case 'leader':
        if (!this.host && data.id !== this.leader?.id && !this.candidates.has(candidateKey(data.id, data.key))) void this.askToJoin(data);
        return;
      case 'join':
        // A join for another leader (an impostor's, or one that left) is not this one's to count.
        if (this.host && data.to === this.id) void this.welcome(data.key, data.proof);
    }
  }

  /**
   * Follower: opens the pair channel with an announced leader and asks to join; it counts only once welcomed. An
   * encrypted database's announcement must carry a fresh proof, checked before anything costly; the announcements
   * left are taken at CANDIDATES_PER_SECOND.
   */
  private async askToJoin({ id: leaderId, key: leaderKey, at, proof: announced }: Extract<GroupMessage, { t: 'leader' }>): Promise<void> {
    let proofKey: CryptoKey | null;
    try {
      proofKey = await this.auth();
    } catch (error) {
      this.fail(error); // this tab cannot join: no key, or not the database's
      return;
    }
    if (proofKey) {
      const fresh = at !== undefined && Math.abs(Date.now() - at) <= ANNOUNCE_FRESH_MS;
      if (!fresh || !announced || !(await verify(proofKey, announceInput(this.lockName, leaderId, leaderKey, at), announced))) {
        this.rejected++;
        return;
      }
    }
    const candidate = candidateKey(leaderId, leaderKey);
    if (this.closed || this.host || this.candidates.has(candidate) || this.leader?.id === leaderId) return;
    if (!this.newCandidates.take()) {
      this.rejected++;
      this.askAgainLater();
      return;
    }
    const name = await pairName(this.lockName, this.keys, leaderKey).catch(() => null);
    if (name === null) {
      this.rejected++; // not a key on the curve
      return;
    }
    if (this.closed || this.host || this.candidates.has(candidate) || this.leader?.id === leaderId) return;
    const proof = proofKey && (await sign(proofKey, proofInput('join', this.lockName, leaderId, this.keys.publicRaw, leaderKey)));
    if (this.closed || this.host || this.candidates.has(candidate)) return;
    const channel = new BroadcastChannel(name);
    const from = { id: leaderId, key: leaderKey, candidate, channel };
    channel.onmessage = (event: MessageEvent<unknown>) => this.guarded(() => this.receiveFromLeader(from, event.data));
    channel.onmessageerror = () => this.rejected++;
    this.candidates.set(candidate, channel);
    for (const [id, old] of this.candidates) {
      if (this.candidates.size <= MAX_CANDIDATES) break;
      old.close();
      this.candidates.delete(id);
    }
    const join = { t: 'join', to: leaderId, key: this.keys.publicRaw, ...(proof ? { proof } : {}) } satisfies GroupMessage;
    this.post(this.group, join);
    // A leader drops joins past its rate: ask again until welcomed (or this candidate is dropped).
    let retries = 0;
    const timer = setInterval(() => {
      if (this.closed || this.candidates.get(candidate) !== channel || ++retries > JOIN_RETRIES) clearInterval(timer);
      else this.post(this.group, join);
    }, JOIN_RETRY_MS);
  }

  /**
   * A dropped announcement may have been the real leader's: once a token is back, ask again (one `who`, which the
   * leader answers once per window).
   */
  private askAgainLater(): void {
    if (this.askAgainTimer !== undefined) return;
    this.askAgainTimer = setTimeout(() => {
      this.askAgainTimer = undefined;
      if (!this.closed && !this.host) this.post(this.group, { t: 'who' });
    }, 1000 / CANDIDATES_PER_SECOND);
  }

  /**
   * Leader: opens (or reuses) the pair channel with a follower and welcomes it there. Refused joins are counted:
   * without a valid proof (encrypted database), past the rate, not a key on the curve, or with no room. The proof is
   * checked first, so the rates are spent only by joins that hold the key: new followers share JOINS_PER_SECOND,
   * and each joined one has its own.
   */
  private async welcome(followerKey: Uint8Array, proof: Uint8Array | undefined): Promise<void> {
    const proofKey = await this.auth();
    if (proofKey && !(proof && (await verify(proofKey, proofInput('join', this.lockName, this.id, followerKey, this.keys.publicRaw), proof)))) {
      this.rejected++;
      return;
    }
    if (this.closed || !this.host) return;
    const peerId = bytesToBase64Url(followerKey);
    let peer = this.peers.get(peerId);
    if (!(peer ? peer.joins.take() : this.newJoins.take())) {
      this.rejected++;
      return;
    }
    peer ??= await this.openPeer(peerId, followerKey);
    if (!peer || this.closed || !this.host) return;
    peer.lastUsed = performance.now();
    const welcomeProof = proofKey && (await sign(proofKey, proofInput('welcome', this.lockName, this.id, followerKey, this.keys.publicRaw)));
    this.post(peer.channel, { t: 'welcome', id: this.id, ...(welcomeProof ? { proof: welcomeProof } : {}) } satisfies FromLeader);
    if (this.host.locked) this.post(peer.channel, { t: 'locked' } satisfies FromLeader);
  }

  /** Leader: the pair channel with a new follower (or the one a concurrent join opened meanwhile); undefined when refused. */
  private async openPeer(peerId: string, followerKey: Uint8Array): Promise<Peer | undefined> {
    const name = await pairName(this.lockName, this.keys, followerKey).catch(() => null);
    if (name === null) {
      this.rejected++; // not a key on the curve
      return undefined;
    }
    if (this.closed || !this.host) return undefined;
    const joined = this.peers.get(peerId);
    if (joined) return joined;
    if (this.peers.size >= MAX_PEERS && !this.evictIdlestPeer()) {
      this.rejected++;
      return undefined;
    }
    const channel = new BroadcastChannel(name);
    const peer: Peer = { channel, key: followerKey, lastUsed: performance.now(), busy: 0, joins: new Bucket(PEER_JOINS_PER_SECOND, PEER_JOINS_AT_ONCE) };
    channel.onmessage = (event: MessageEvent<unknown>) => this.guarded(() => this.receiveFromFollower(peerId, peer, event.data));
    channel.onmessageerror = () => this.rejected++;
    this.peers.set(peerId, peer);
    return peer;
  }

  /**
   * Too many followers (or a script posting joins): the least recently active one with no call running is told to
   * re-join, as after a handover. False when every one has calls running.
   */
  private evictIdlestPeer(): boolean {
    let idlest: [string, Peer] | null = null;
    for (const entry of this.peers) if (entry[1].busy === 0 && (!idlest || entry[1].lastUsed < idlest[1].lastUsed)) idlest = entry;
    if (!idlest) return false;
    this.post(idlest[1].channel, { t: 'leaving' } satisfies FromLeader);
    idlest[1].channel.close();
    this.peers.delete(idlest[0]);
    return true;
  }

  private receiveFromLeader(from: { id: string; key: Uint8Array; candidate: string; channel: BroadcastChannel }, data: unknown): void {
    if (this.closed) return;
    if (!isFromLeader(data) || (data.t === 'welcome' && data.id !== from.id)) {
      this.rejected++;
      return;
    }
    const current = this.leader?.channel === from.channel;
    switch (data.t) {
      case 'welcome':
        if (this.host) return;
        if (!current) {
          void this.switchTo(from, data.proof);
          return;
        }
        for (const [seq, call] of this.pending) if (call.sentTo === null) this.send(seq);
        this.onLeader();
        return;
      case 'pong':
        if (current && this.liveness?.n === data.n) this.liveness.answered();
        return;
      case 'locked':
        if (current) this.options.onLocked?.();
        return;
      case 'leaving':
        from.channel.close();
        if (current) {
          this.leader = null;
          this.liveness?.answered();
          this.post(this.group, { t: 'who' }); // the next leader may already be announced
        } else this.candidates.delete(from.candidate);
        return;
      case 'progress': {
        const call = this.pending.get(data.seq);
        if (!current || call?.sentTo !== from.id) return;
        this.arm(data.seq);
        call.onProgress?.(data.progress);
        return;
      }
      case 'done': {
        const call = this.pending.get(data.seq);
        if (!current || call?.sentTo !== from.id) return; // late: timed out, or re-sent elsewhere
        this.pending.delete(data.seq);
        clearTimeout(call.timer);
        if (data.error) {
          const error = fromWireError(data.error);
          if (isEngramError(error, ErrorCode.LOCKED)) this.options.onLocked?.();
          call.reject(error);
        }
        else if (isAnswerOf(call.method, data.value)) call.resolve(this.withCount(call.method, data.value));
        else {
          this.rejected++;
          call.reject(new EngramError(ErrorCode.WORKER_FAILED, `the tab holding the database answered ${call.method}() with a value of the wrong shape`));
        }
      }
    }
  }

  /**
   * A leader other than the current one welcomed this follower. Followed only if it proves the data key (encrypted
   * database) and the current leader is gone: it said `leaving`, or does not answer a ping. Otherwise it is an
   * impostor (or a stale leader), refused and counted.
   */
  private async switchTo(from: { id: string; key: Uint8Array; candidate: string; channel: BroadcastChannel }, proof: Uint8Array | undefined): Promise<void> {
    const proofKey = await this.auth().catch(() => undefined);
    const proven = proofKey === null || (proofKey !== undefined && proof !== undefined && (await verify(proofKey, proofInput('welcome', this.lockName, from.id, this.keys.publicRaw, from.key), proof)));
    const refused = !proven || (this.leader !== null && (await this.alive()));
    if (this.closed || this.host || this.candidates.get(from.candidate) !== from.channel) return;
    if (refused) {
      this.rejected++;
      from.channel.close();
      this.candidates.delete(from.candidate);
      return;
    }
    this.leader?.channel.close();
    this.candidates.delete(from.candidate);
    this.leader = { id: from.id, key: from.key, channel: from.channel };
    for (const seq of this.pending.keys()) this.send(seq);
    this.onLeader();
  }

  /** Pings the current leader on their pair channel: true when it answers within LIVENESS_MS. */
  private alive(): Promise<boolean> {
    const leader = this.leader;
    if (!leader) return Promise.resolve(false);
    if (this.liveness) return this.liveness.result;
    const n = ++this.pings;
    let answered = () => {};
    const result = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), Math.min(LIVENESS_MS, this.options.timeouts.callMs));
      // Resolves true only if this leader is still the one followed (dropLeader and `leaving` also call it).
      answered = () => {
        clearTimeout(timer);
        resolve(this.leader === leader);
      };
    }).finally(() => (this.liveness = null));
    this.liveness = { n, answered, result };
    this.post(leader.channel, { t: 'ping', n } satisfies ToLeader);
    return result;
  }

  private receiveFromFollower(peerId: string, peer: Peer, data: unknown): void {
    if (this.closed) return;
    if (!isToLeader(data)) {
      this.rejected++;
      return;
    }
    if (!this.host) return;
    peer.lastUsed = performance.now();
    if (data.t === 'ping') this.post(peer.channel, { t: 'pong', n: data.n } satisfies FromLeader);
    else this.serve(this.host, peerId, peer, data);
  }

  /**
   * Runs a follower's call, once per (follower, sequence number): a retry (the follower re-joined, or re-sent after
   * a handover) gets the original's answer, so a write never runs twice here.
   */
  private serve(host: Host, peerId: string, peer: Peer, { seq, method, args, retry, stack }: Call): void {
    let answers = this.answers.get(peerId);
    if (answers) this.answers.delete(peerId); // re-inserted last: the most recently active
    else answers = new Map();
    this.answers.set(peerId, answers);
    for (const old of this.answers.keys()) {
      if (this.answers.size <= ANSWER_PEERS) break;
      this.answers.delete(old);
    }
    // Progress and answers go to the peer's channel of the moment (it may have re-joined meanwhile).
    const channel = () => this.peers.get(peerId)?.channel ?? peer.channel;
    let answer = answers.get(seq);
    if (!answer && SECRET_METHODS.has(method)) {
      // Only a hand-made follower sends one (a real one refuses it in its own tab): refused, counted, never run.
      this.rejected++;
      answer = Promise.resolve<Done>({ t: 'done', seq, error: toWireError(new EngramError(ErrorCode.INVALID_INPUT, `${method.slice(0, 40)}() runs only in the tab that holds the database, never for another tab`), stack) });
    }
    if (!answer) {
      const onProgress = (progress: Progress) => this.post(channel(), { t: 'progress', seq, progress } satisfies FromLeader);
      // host.call refuses any method outside the Memory API with INVALID_INPUT; a sealed one (`unlock`) is opened here.
      const run = isSealed(method) ? this.unlockFor(peer, args) : host.call(method, args, onProgress, retry);
      answer = run.then(
        (value): Done => ({ t: 'done', seq, value }),
        (error: unknown): Done => ({ t: 'done', seq, error: toWireError(error, stack) }),
      );
      answers.set(seq, answer);
      if (!WRITE_METHODS.has(method)) void answer.then(() => answers.delete(seq));
      for (const old of answers.keys()) {
        if (answers.size <= ANSWERS_PER_PEER) break;
        answers.delete(old);
      }
    }
    peer.busy++;
    const sent = answer
      .then((done) => {
        try {
          this.post(channel(), done);
        } catch (error) {
          const wire = toWireError(toEngramError(error, ErrorCode.WORKER_FAILED, `the answer of ${method}() could not be sent to the calling tab`), stack);
          this.post(channel(), { t: 'done', seq, error: wire } satisfies FromLeader);
        }
      })
      .finally(() => peer.busy--);
    void this.serving.track(sent);
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

/** A call of a SECRET_METHODS method in a follower tab: it runs only where the database is held. */
function notLeader(method: string, lockName: string): EngramError {
  return new EngramError(
    ErrorCode.NOT_LEADER,
    `${method}() runs only in the tab that holds the database (${lockName.replace(/^engram:/, '')}), and another tab of this app holds it: call it there (status().leader is true), or close the app's other tabs and call it again`,
    { details: { method } },
  );
}
