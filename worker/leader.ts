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
import { closedError, fromWireError, timeoutError, type CallTimeouts } from '../src/contract/protocol.js';
import { isAnswerOf, isPoll, SECRET_METHODS, timeoutBetweenTabs, type WorkerMethodName } from '../src/contract/methods.js';
import type { Progress } from '../src/types.js';
import type { Host } from './host.js';
import { Bucket } from './rate.js';
import { Leading } from './leading.js';
import { announceInput, candidateKey, makeKeys, pairName, proofInput, sign, unlockInput, unlockKey, verify, type Keys } from './tab-keys.js';
import { isFromLeader, isGroupMessage, type FromLeader, type GroupMessage, type ToLeader } from './tab-messages.js';

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

/** Leaders a follower is waiting to be welcomed by at once (more means someone is posting forged announcements). */
const MAX_CANDIDATES = 4;
/** A signed announcement (encrypted database) older than this is refused: replaying a departed leader's does nothing. */
const ANNOUNCE_FRESH_MS = 10_000;
/** Announced leaders a follower asks to join per second, and at once, after the proof: forged announcements are dropped and counted. */
const CANDIDATES_PER_SECOND = 4;
/** A follower not yet welcomed repeats its join this often (a join may have been dropped), this many times. */
const JOIN_RETRY_MS = 1000;
const JOIN_RETRIES = 10;
/** How long a follower's leader has to answer a ping before another leader's welcome is believed. */
const LIVENESS_MS = 3000;
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
  /** Announced leaders this follower asks to join. */
  private readonly newCandidates = new Bucket(CANDIDATES_PER_SECOND, CANDIDATES_PER_SECOND);
  /** As follower: a `who` to post once a dropped announcement's tokens are back. */
  private askAgainTimer: ReturnType<typeof setTimeout> | undefined;
  private takeoverFailures = 0;
  /**
   * Announced leaders this follower asked to join, by id and key (a forged announcement may reuse a real leader's
   * id), until one welcomes it.
   */
  private readonly candidates = new Map<string, BroadcastChannel>();
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private rejected = 0;
  /** The leader's side: announcing, welcoming followers, serving their calls. */
  private readonly leading: Leading;
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
    const member = this;
    this.leading = new Leading({
      id: this.id,
      keys,
      lockName,
      group: this.group,
      get host() {
        return member.host;
      },
      get closed() {
        return member.closed;
      },
      auth: () => this.auth(),
      post: (channel, message) => this.post(channel, message),
      guarded: (handle) => this.guarded(handle),
      reject: () => void this.rejected++,
    });
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
    this.leading.stopAnnouncing();
    clearTimeout(this.askAgainTimer);
    this.rejectPending(closedError());
    try {
      if (this.host) {
        // Answer what followers already sent, then hand over: a call arriving now stays pending on its follower
        // and is re-sent to the next leader.
        await this.leading.served();
        await this.host.close();
        this.leading.leave();
      }
    } finally {
      this.releaseLock();
      this.leading.closePeers();
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
      this.leading.locked();
    });
    this.dropLeader();
    for (const [seq, call] of this.pending) {
      this.pending.delete(seq);
      clearTimeout(call.timer);
      this.host.call(call.method, call.args, call.onProgress, call.sentTo !== null).then((value) => call.resolve(this.withCount(call.method, value)), call.reject);
    }
    this.leading.announce();
    this.onLeader();
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
        if (this.host) this.leading.announce();
        return;
      case 'leader':
        if (!this.host && data.id !== this.leader?.id && !this.candidates.has(candidateKey(data.id, data.key))) void this.askToJoin(data);
        return;
      case 'join':
        // A join for another leader (an impostor's, or one that left) is not this one's to count.
        if (this.host && data.to === this.id) void this.leading.welcome(data.key, data.proof);
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
