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
import { EngramError, ErrorCode } from '../src/errors.js';
import { newId } from '../src/util/ids.js';
import { closedError, timeoutError } from '../src/contract/protocol.js';
import type { WorkerMethodName } from '../src/contract/methods.js';
import { isPoll, SECRET_METHODS } from '../src/contract/dispatch.js';
import type { Progress } from '../src/types.js';
import type { Host } from './host.js';
import { Following } from './following.js';
import { Leading } from './leading.js';
import type { GroupOptions, Seat } from './seat.js';
import { makeKeys, unlockInput, unlockKey, type Keys } from './tab-keys.js';
import { isGroupMessage, type FromLeader, type GroupMessage, type ToLeader } from './tab-messages.js';

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

/** One worker of the group; both sides of the protocol read it as their Seat. */
class Member implements Host, Seat {
  readonly id = newId();
  readonly group: BroadcastChannel;
  private readonly abort = new AbortController();
  host: Host | null = null;
  /** The tab proof key (GroupOptions.auth), asked once. */
  private authKey: Promise<CryptoKey | null> | null = null;
  private takeoverFailures = 0;
  private rejected = 0;
  /** The leader's side: announcing, welcoming followers, serving their calls. */
  private readonly leading: Leading;
  /** The follower's side: joining the leader, sending this tab's calls to it. */
  private readonly following: Following;
  private releaseLock: () => void = () => undefined;
  private failure: unknown = null;
  closed = false;
  private onLeader: () => void = () => undefined;

  constructor(
    readonly lockName: string,
    private readonly startHost: () => Promise<Host>,
    readonly options: GroupOptions,
    readonly keys: Keys,
  ) {
    this.group = new BroadcastChannel(lockName);
    this.group.onmessage = (event: MessageEvent<unknown>) => this.guarded(() => this.receiveGroup(event.data));
    this.group.onmessageerror = () => this.rejected++;
    this.leading = new Leading(this);
    this.following = new Following(this);
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

  call(method: string, args: unknown[], onProgress?: (progress: Progress) => void, retry = false, signal?: AbortSignal): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(closedError());
    if (this.host) return this.host.call(method, args, onProgress, retry, signal).then((value) => this.withCount(method, value));
    // Its secret stays in this tab's worker: never posted to the leader, nor kept to be re-sent after a handover.
    if (SECRET_METHODS.has(method)) return Promise.reject(notLeader(method, this.lockName));
    return this.following.call(method, args, onProgress, signal);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    this.leading.stopAnnouncing();
    this.following.stop(closedError());
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
      this.following.dropLeader();
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
      const leader = this.following.leaderNow();
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
    this.following.dropLeader();
    for (const call of this.following.takePending()) {
      this.host.call(call.method, call.args, call.onProgress, call.sentTo !== null, call.signal).then((value) => call.resolve(this.withCount(call.method, value)), call.reject);
    }
    this.leading.announce();
    this.onLeader();
  }

  reject(): void {
    this.rejected++;
  }

  found(): void {
    this.onLeader();
  }

  fail(error: unknown): void {
    this.failure ??= error instanceof EngramError ? error : new EngramError(ErrorCode.WORKER_FAILED, `could not take over the database: ${String(error)}`);
    this.following.rejectPending(this.failure);
    this.onLeader();
  }

  /** The tab proof key, asked once; a failure is not kept, so a later takeover asks again. */
  auth(): Promise<CryptoKey | null> {
    if (this.authKey) return this.authKey;
    const key = this.options.auth?.() ?? Promise.resolve(null);
    this.authKey = key;
    key.catch(() => {
      if (this.authKey === key) this.authKey = null;
    });
    return key;
  }

  /** A poll (`status`) answers with this tab's own count of ignored messages and role, whichever tab answered the rest. */
  withCount(method: string, value: unknown): unknown {
    return isPoll(method) && typeof value === 'object' && value !== null ? { ...value, rejectedMessages: this.rejected, leader: this.host !== null } : value;
  }

  /**
   * Runs a message handler so that nothing it throws escapes: an exception in a worker's event handler reaches the
   * page as the worker's `error` event, which ends the Memory for good.
   */
  guarded(handle: () => void): void {
    try {
      handle();
    } catch (error) {
      this.rejected++;
      console.warn('Engram: a channel message could not be handled', error);
    }
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
        if (!this.host) this.following.announced(data);
        return;
      case 'join':
        // A join for another leader (an impostor's, or one that left) is not this one's to count.
        if (this.host && data.to === this.id) void this.leading.welcome(data.key, data.proof);
    }
  }

  /** Posting on a channel closed meanwhile (an evicted follower, a closing worker) is dropped, not thrown. */
  post(channel: BroadcastChannel, message: GroupMessage | FromLeader | ToLeader): void {
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
