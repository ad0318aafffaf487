/**
 * The follower's side of the tabs' protocol (worker/leader.ts): asking announced leaders to join, following the one
 * that welcomes it (another only once this one is gone), and sending this tab's calls to it, each under its timeout
 * and re-sent to the next leader after a handover.
 */
import { EngramError, ErrorCode, isEngramError, toEngramError } from '../src/errors.js';
import { fromWireError, timeoutError } from '../src/contract/protocol.js';
import { isAnswerOf, timeoutBetweenTabs } from '../src/contract/dispatch.js';
import type { Progress } from '../src/types.js';
import { abortedError } from '../src/util/abort.js';
import { Bucket } from './rate.js';
import type { Seat } from './seat.js';
import { announceInput, candidateKey, pairName, proofInput, sign, verify } from './tab-keys.js';
import { isFromLeader, type GroupMessage, type ToLeader } from './tab-messages.js';

export interface Pending {
  method: string;
  args: unknown[];
  onProgress: ((progress: Progress) => void) | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** The leader it was last sent to, or null when not sent yet. */
  sentTo: string | null;
  timeoutMs: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The caller's signal: aborting it posts `abort` to the leader the call was sent to. */
  signal: AbortSignal | undefined;
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

export class Following {
  /** The leader this follower was welcomed by, its public key, and their pair channel. */
  private leader: { id: string; key: Uint8Array; channel: BroadcastChannel } | null = null;
  /** The liveness check of the current leader under way, and the pong it waits for. */
  private liveness: { n: number; answered: () => void; result: Promise<boolean> } | null = null;
  private pings = 0;
  /** Announced leaders this follower asks to join. */
  private readonly newCandidates = new Bucket(CANDIDATES_PER_SECOND, CANDIDATES_PER_SECOND);
  /** A `who` to post once a dropped announcement's tokens are back. */
  private askAgainTimer: ReturnType<typeof setTimeout> | undefined;
  /**
   * Announced leaders this follower asked to join, by id and key (a forged announcement may reuse a real leader's
   * id), until one welcomes it.
   */
  private readonly candidates = new Map<string, BroadcastChannel>();
  private readonly pending = new Map<number, Pending>();
  private seq = 0;

  constructor(private readonly seat: Seat) {}

  /** Sends a call to the leader (now, or once one welcomes this worker) and waits for its answer. */
  call(method: string, args: unknown[], onProgress?: (progress: Progress) => void, signal?: AbortSignal): Promise<unknown> {
    if (signal?.aborted) return Promise.reject(abortedError(method, signal));
    const seq = ++this.seq;
    const onAbort = () => this.abortCall(seq);
    signal?.addEventListener('abort', onAbort, { once: true });
    const answer = new Promise((resolve, reject) => {
      const timeoutMs = timeoutBetweenTabs(method, this.seat.options.timeouts);
      this.pending.set(seq, { method, args, onProgress, resolve, reject, sentTo: null, timeoutMs, timer: undefined, signal });
      this.arm(seq);
      this.send(seq);
    });
    return answer.finally(() => signal?.removeEventListener('abort', onAbort));
  }

  /**
   * The caller aborted call `seq`: one not sent yet ends here with ABORTED (nothing of it reached a leader); one sent
   * is aborted in the leader, whose answer (ABORTED, or the value of a call past its commit) ends it.
   */
  private abortCall(seq: number): void {
    const call = this.pending.get(seq);
    if (!call) return;
    if (call.sentTo === null) {
      this.pending.delete(seq);
      clearTimeout(call.timer);
      call.reject(abortedError(call.method, call.signal));
    } else if (this.leader?.id === call.sentTo) this.seat.post(this.leader.channel, { t: 'abort', seq } satisfies ToLeader);
  }

  /** The leader followed now, or null. */
  leaderNow(): { id: string; key: Uint8Array } | null {
    return this.leader;
  }

  /** The calls still waiting, handed over (their timeouts stopped) to run here: this worker leads now. */
  takePending(): Pending[] {
    const calls = [...this.pending.values()];
    for (const call of calls) clearTimeout(call.timer);
    this.pending.clear();
    return calls;
  }

  /** Closing: no more asking, and every call still waiting ends with `error`. */
  stop(error: unknown): void {
    clearTimeout(this.askAgainTimer);
    this.rejectPending(error);
  }

  /** A leader announced itself on the group channel: asked to join unless it is followed or asked already. */
  announced(data: Extract<GroupMessage, { t: 'leader' }>): void {
    if (data.id !== this.leader?.id && !this.candidates.has(candidateKey(data.id, data.key))) void this.askToJoin(data);
  }

  /** (Re)starts the call's timeout: a call with no answer (and no progress) for its timeout rejects with TIMEOUT. */
  private arm(seq: number): void {
    const call = this.pending.get(seq);
    if (!call) return;
    clearTimeout(call.timer);
    call.timer = setTimeout(() => {
      // The leader stops the call where it still can, as the caller's signal would.
      if (call.sentTo !== null && this.leader?.id === call.sentTo) this.seat.post(this.leader.channel, { t: 'abort', seq } satisfies ToLeader);
      this.pending.delete(seq);
      call.reject(timeoutError(call.method, call.timeoutMs, 'the tab holding the database'));
      // The leader may be gone without a word (or announcements were drowned out): look for it again.
      if (!this.seat.host && !this.seat.closed) this.seat.post(this.seat.group, { t: 'who' });
    }, call.timeoutMs);
  }

  private send(seq: number): void {
    const call = this.pending.get(seq);
    if (!call || !this.leader) return; // sent when a leader welcomes this worker
    const retry = call.sentTo !== null;
    call.sentTo = this.leader.id;
    try {
      this.seat.post(this.leader.channel, { t: 'call', seq, method: call.method, args: call.args, retry, stack: this.seat.options.debug } satisfies ToLeader);
    } catch (error) {
      this.pending.delete(seq);
      clearTimeout(call.timer);
      call.reject(toEngramError(error, ErrorCode.INVALID_INPUT, `the arguments of ${call.method}() cannot be sent to the tab holding the database`));
    }
  }

  dropLeader(): void {
    this.leader?.channel.close();
    this.leader = null;
    this.liveness?.answered();
    for (const channel of this.candidates.values()) channel.close();
    this.candidates.clear();
  }

  /**
   * Opens the pair channel with an announced leader and asks to join; it counts only once welcomed. An
   * encrypted database's announcement must carry a fresh proof, checked before anything costly; the announcements
   * left are taken at CANDIDATES_PER_SECOND.
   */
  private async askToJoin({ id: leaderId, key: leaderKey, at, proof: announced }: Extract<GroupMessage, { t: 'leader' }>): Promise<void> {
    let proofKey: CryptoKey | null;
    try {
      proofKey = await this.seat.auth();
    } catch (error) {
      this.seat.fail(error); // this tab cannot join: no key, or not the database's
      return;
    }
    if (proofKey) {
      const fresh = at !== undefined && Math.abs(Date.now() - at) <= ANNOUNCE_FRESH_MS;
      if (!fresh || !announced || !(await verify(proofKey, announceInput(this.seat.lockName, leaderId, leaderKey, at), announced))) {
        this.seat.reject();
        return;
      }
    }
    const candidate = candidateKey(leaderId, leaderKey);
    if (this.seat.closed || this.seat.host || this.candidates.has(candidate) || this.leader?.id === leaderId) return;
    if (!this.newCandidates.take()) {
      this.seat.reject();
      this.askAgainLater();
      return;
    }
    const name = await pairName(this.seat.lockName, this.seat.keys, leaderKey).catch(() => null);
    if (name === null) {
      this.seat.reject(); // not a key on the curve
      return;
    }
    if (this.seat.closed || this.seat.host || this.candidates.has(candidate) || this.leader?.id === leaderId) return;
    const proof = proofKey && (await sign(proofKey, proofInput('join', this.seat.lockName, leaderId, this.seat.keys.publicRaw, leaderKey)));
    if (this.seat.closed || this.seat.host || this.candidates.has(candidate)) return;
    const channel = new BroadcastChannel(name);
    const from = { id: leaderId, key: leaderKey, candidate, channel };
    channel.onmessage = (event: MessageEvent<unknown>) => this.seat.guarded(() => this.receiveFromLeader(from, event.data));
    channel.onmessageerror = () => this.seat.reject();
    this.candidates.set(candidate, channel);
    for (const [id, old] of this.candidates) {
      if (this.candidates.size <= MAX_CANDIDATES) break;
      old.close();
      this.candidates.delete(id);
    }
    const join = { t: 'join', to: leaderId, key: this.seat.keys.publicRaw, ...(proof ? { proof } : {}) } satisfies GroupMessage;
    this.seat.post(this.seat.group, join);
    // A leader drops joins past its rate: ask again until welcomed (or this candidate is dropped).
    let retries = 0;
    const timer = setInterval(() => {
      if (this.seat.closed || this.candidates.get(candidate) !== channel || ++retries > JOIN_RETRIES) clearInterval(timer);
      else this.seat.post(this.seat.group, join);
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
      if (!this.seat.closed && !this.seat.host) this.seat.post(this.seat.group, { t: 'who' });
    }, 1000 / CANDIDATES_PER_SECOND);
  }

  private receiveFromLeader(from: { id: string; key: Uint8Array; candidate: string; channel: BroadcastChannel }, data: unknown): void {
    if (this.seat.closed) return;
    if (!isFromLeader(data) || (data.t === 'welcome' && data.id !== from.id)) {
      this.seat.reject();
      return;
    }
    const current = this.leader?.channel === from.channel;
    switch (data.t) {
      case 'welcome':
        if (this.seat.host) return;
        if (!current) {
          void this.switchTo(from, data.proof);
          return;
        }
        for (const [seq, call] of this.pending) if (call.sentTo === null) this.send(seq);
        this.seat.found();
        return;
      case 'pong':
        if (current && this.liveness?.n === data.n) this.liveness.answered();
        return;
      case 'locked':
        if (current) this.seat.options.onLocked?.();
        return;
      case 'leaving':
        from.channel.close();
        if (current) {
          this.leader = null;
          this.liveness?.answered();
          this.seat.post(this.seat.group, { t: 'who' }); // the next leader may already be announced
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
          if (isEngramError(error, ErrorCode.LOCKED)) this.seat.options.onLocked?.();
          call.reject(error);
        }
        else if (isAnswerOf(call.method, data.value)) call.resolve(this.seat.withCount(call.method, data.value));
        else {
          this.seat.reject();
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
    const proofKey = await this.seat.auth().catch(() => undefined);
    const proven = proofKey === null || (proofKey !== undefined && proof !== undefined && (await verify(proofKey, proofInput('welcome', this.seat.lockName, from.id, this.seat.keys.publicRaw, from.key), proof)));
    const refused = !proven || (this.leader !== null && (await this.alive()));
    if (this.seat.closed || this.seat.host || this.candidates.get(from.candidate) !== from.channel) return;
    if (refused) {
      this.seat.reject();
      from.channel.close();
      this.candidates.delete(from.candidate);
      return;
    }
    this.leader?.channel.close();
    this.candidates.delete(from.candidate);
    this.leader = { id: from.id, key: from.key, channel: from.channel };
    for (const seq of this.pending.keys()) this.send(seq);
    this.seat.found();
  }

  /** Pings the current leader on their pair channel: true when it answers within LIVENESS_MS. */
  private alive(): Promise<boolean> {
    const leader = this.leader;
    if (!leader) return Promise.resolve(false);
    if (this.liveness) return this.liveness.result;
    const n = ++this.pings;
    let answered = () => {};
    const result = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), Math.min(LIVENESS_MS, this.seat.options.timeouts.callMs));
      // Resolves true only if this leader is still the one followed (dropLeader and `leaving` also call it).
      answered = () => {
        clearTimeout(timer);
        resolve(this.leader === leader);
      };
    }).finally(() => (this.liveness = null));
    this.liveness = { n, answered, result };
    this.seat.post(leader.channel, { t: 'ping', n } satisfies ToLeader);
    return result;
  }

  /** Ends every call still waiting for an answer with `error`. */
  rejectPending(error: unknown): void {
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
      call.reject(error);
    }
    this.pending.clear();
  }
}
