/**
 * Several tabs, one database. Each tab's worker asks for a Web Lock named after the database; the holder is the
 * leader: the only one that opens SQLite and hosts the engine, so every tab searches the same in-memory indexes
 * and sees every write at once. The others are followers: they send each call over a BroadcastChannel to the
 * leader and wait for its answer. When the leader's tab goes away its lock is released, the next worker in the
 * lock queue opens the database and announces itself, and followers re-send the calls still unanswered (an `add`
 * re-sent this way is recognised if it had been committed, see Host.call).
 *
 * Why not a SharedWorker: it cannot use OPFS synchronous access handles, and Chrome on Android has none.
 */
import { EngramError, ErrorCode } from '../src/errors.js';
import { newId } from '../src/engine/records.js';
import { closedError, fromWireError, toWireError, type WireError } from '../src/client/protocol.js';
import type { Progress } from '../src/types.js';
import type { Host, HostMethod } from './host.js';

type Message =
  | { t: 'hello' }
  | { t: 'leader'; leader: string }
  | { t: 'leaving'; leader: string }
  | { t: 'call'; from: string; to: string; seq: number; method: HostMethod; args: unknown[]; retry: boolean }
  | { t: 'progress'; to: string; seq: number; progress: Progress }
  | { t: 'done'; to: string; seq: number; value?: unknown; error?: WireError };

interface Pending {
  method: HostMethod;
  args: unknown[];
  onProgress: ((progress: Progress) => void) | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** The leader it was last sent to, or null when not sent yet. */
  sentTo: string | null;
}

/** Joins the group of workers sharing `lockName`; resolves once there is a leader (possibly this worker). */
export async function joinGroup(lockName: string, startHost: () => Promise<Host>): Promise<Host> {
  const member = new Member(lockName, startHost);
  await member.join();
  return member;
}

class Member implements Host {
  private readonly id = newId();
  private readonly channel: BroadcastChannel;
  private readonly abort = new AbortController();
  private host: Host | null = null;
  private leaderId: string | null = null;
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  /** Calls this worker is running for followers: a closing leader finishes them before letting go. */
  private readonly serving = new Set<Promise<unknown>>();
  private releaseLock: () => void = () => undefined;
  private failure: unknown = null;
  private closed = false;
  private onLeader: () => void = () => undefined;

  constructor(
    private readonly lockName: string,
    private readonly startHost: () => Promise<Host>,
  ) {
    this.channel = new BroadcastChannel(lockName);
    this.channel.onmessage = (event: MessageEvent<Message>) => this.receive(event.data);
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
    this.post({ t: 'hello' });
    await found;
    if (this.failure) throw this.failure;
  }

  call(method: HostMethod, args: unknown[], onProgress?: (progress: Progress) => void): Promise<unknown> {
    if (this.closed) return Promise.reject(closedError());
    if (this.failure) return Promise.reject(this.failure);
    if (this.host) return this.host.call(method, args, onProgress);
    return new Promise((resolve, reject) => {
      const seq = ++this.seq;
      this.pending.set(seq, { method, args, onProgress, resolve, reject, sentTo: null });
      this.send(seq);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    for (const call of this.pending.values()) call.reject(closedError());
    this.pending.clear();
    try {
      if (this.host) {
        // Answer what followers already sent, then hand over: a call arriving now stays pending on its follower
        // and is re-sent to the next leader.
        await Promise.allSettled(this.serving);
        await this.host.close();
        this.post({ t: 'leaving', leader: this.id });
      }
    } finally {
      this.releaseLock();
      this.channel.close();
    }
  }

  /** Opens the database here and serves every follower, including the calls this worker had pending. */
  private async lead(): Promise<void> {
    if (this.closed) return;
    this.host = await this.startHost();
    this.leaderId = this.id;
    for (const [seq, call] of this.pending) {
      this.pending.delete(seq);
      this.host.call(call.method, call.args, call.onProgress, call.sentTo !== null).then(call.resolve, call.reject);
    }
    this.post({ t: 'leader', leader: this.id });
    this.onLeader();
  }

  private fail(error: unknown): void {
    this.failure = error instanceof EngramError ? error : new EngramError(ErrorCode.WORKER_FAILED, `could not take over the database: ${String(error)}`);
    for (const call of this.pending.values()) call.reject(this.failure);
    this.pending.clear();
    this.onLeader();
  }

  private send(seq: number): void {
    const call = this.pending.get(seq);
    if (!call || !this.leaderId) return; // sent when a leader announces itself
    const retry = call.sentTo !== null;
    call.sentTo = this.leaderId;
    this.post({ t: 'call', from: this.id, to: this.leaderId, seq, method: call.method, args: call.args, retry });
  }

  private receive(message: Message): void {
    if (this.closed) return;
    switch (message.t) {
      case 'hello':
        if (this.host) this.post({ t: 'leader', leader: this.id });
        return;
      case 'leader':
        if (this.host || message.leader === this.leaderId) return;
        this.leaderId = message.leader;
        for (const seq of this.pending.keys()) this.send(seq);
        this.onLeader();
        return;
      case 'leaving':
        if (message.leader === this.leaderId) this.leaderId = null;
        return;
      case 'call':
        if (message.to === this.id && this.host) this.serve(this.host, message);
        return;
      case 'progress':
        if (message.to === this.id) this.pending.get(message.seq)?.onProgress?.(message.progress);
        return;
      case 'done': {
        const call = message.to === this.id ? this.pending.get(message.seq) : undefined;
        if (!call) return;
        this.pending.delete(message.seq);
        if (message.error) call.reject(fromWireError(message.error));
        else call.resolve(message.value);
      }
    }
  }

  private serve(host: Host, { from, seq, method, args, retry }: Extract<Message, { t: 'call' }>): void {
    const onProgress = (progress: Progress) => this.post({ t: 'progress', to: from, seq, progress });
    const run = host.call(method, args, onProgress, retry).then(
      (value) => this.post({ t: 'done', to: from, seq, value }),
      (error: unknown) => this.post({ t: 'done', to: from, seq, error: toWireError(error) }),
    );
    this.serving.add(run);
    void run.finally(() => this.serving.delete(run));
  }

  private post(message: Message): void {
    this.channel.postMessage(message);
  }
}
