/**
 * The leader's side of the tabs' protocol (worker/leader.ts): announcing itself on the group channel, welcoming
 * followers on their pair channels, and serving their calls once each (a retry gets the original's answer).
 */
import { EngramError, ErrorCode, toEngramError } from '../src/errors.js';
import { toWireError } from '../src/contract/protocol.js';
import { isSealed, SECRET_METHODS, WRITE_METHODS } from '../src/contract/dispatch.js';
import type { Progress } from '../src/types.js';
import { InFlight } from '../src/util/in-flight.js';
import type { Host } from './host.js';
import { Bucket } from './rate.js';
import type { Seat } from './seat.js';
import { announceInput, bytesToBase64Url, pairName, proofInput, sign, unlockInput, unlockKey, verify } from './tab-keys.js';
import { isToLeader, type Call, type Done, type FromLeader, type GroupMessage, type ToLeader } from './tab-messages.js';

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

/**
 * Followers the leader keeps a pair channel open for; past this, the least recently active one with no call running
 * is asked to re-join, and a join finding every one busy is refused.
 */
const MAX_PEERS = 64;
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
/**
 * Answers a leader keeps per follower, and followers it keeps answers for, so a retried call gets the original's:
 * a write's for good (they are small: ids, counts, records), a read's only while it runs (running one twice is harmless).
 */
const ANSWERS_PER_PEER = 64;
const ANSWER_PEERS = 2 * MAX_PEERS;

export class Leading {
  /** Joins from new followers this leader takes. */
  private readonly newJoins = new Bucket(JOINS_PER_SECOND, JOINS_PER_SECOND);
  /** When it last announced itself, and the announcement waiting for the end of that window. */
  private announcedAt = -Infinity;
  private announceTimer: ReturnType<typeof setTimeout> | undefined;
  /** Answers given or being given, by follower key then sequence number (most recent last). */
  private readonly answers = new Map<string, Map<number, Promise<Done>>>();
  /** Each follower's pair channel, by its public key. */
  private readonly peers = new Map<string, Peer>();
  /** Calls this worker is running for followers: a closing leader finishes them before letting go. */
  private readonly serving = new InFlight();
  /** The signals of followers' calls it runs, by follower key and sequence number, for their `abort`. */
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly seat: Seat) {}

  /** Settles once the calls being run for followers are answered. */
  served(): Promise<unknown> {
    return this.serving.settled();
  }

  stopAnnouncing(): void {
    clearTimeout(this.announceTimer);
  }

  /** Tells every follower this leader is going (they look for the next one). */
  leave(): void {
    for (const peer of this.peers.values()) this.seat.post(peer.channel, { t: 'leaving' } satisfies FromLeader);
  }

  /** Tells every follower the database locked itself after idle. */
  locked(): void {
    for (const peer of this.peers.values()) this.seat.post(peer.channel, { t: 'locked' } satisfies FromLeader);
  }

  closePeers(): void {
    for (const peer of this.peers.values()) peer.channel.close();
    this.peers.clear();
    this.answers.clear();
  }

  /** A follower's sealed unlock (see Member.unlock, leader.ts). */
  private async unlockFor(peer: Peer, args: unknown[]): Promise<object> {
    const [iv, sealed] = args;
    if (!this.seat.host?.unlock) throw new EngramError(ErrorCode.NOT_ENCRYPTED, 'this database is not encrypted: it never locks');
    if (!(iv instanceof Uint8Array) || iv.length !== 12 || !(sealed instanceof Uint8Array) || sealed.length > 64) throw new EngramError(ErrorCode.INVALID_INPUT, 'unlock(): malformed');
    const key = await unlockKey(this.seat.lockName, this.seat.keys, peer.key);
    let dataKey: Uint8Array;
    try {
      dataKey = new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: iv as Uint8Array<ArrayBuffer>, additionalData: unlockInput(this.seat.lockName, this.seat.id) }, key, sealed as Uint8Array<ArrayBuffer>));
    } catch {
      // Sealed for another leader: the database changed hands since the call was sent.
      throw new EngramError(ErrorCode.WORKER_FAILED, 'unlock(): the tab holding the database changed meanwhile; call it again');
    }
    await this.seat.host.unlock(dataKey);
    return {};
  }

  /** Announces itself on the group channel now, or at the end of the current ANNOUNCE_MS window. */
  announce(): void {
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
        if (this.seat.host && !this.seat.closed) this.seat.post(this.seat.group, message);
      },
      () => this.seat.reject(), // no proof key any more: nothing to announce
    );
  }

  private async announcement(): Promise<GroupMessage> {
    const proofKey = await this.seat.auth();
    if (!proofKey) return { t: 'leader', id: this.seat.id, key: this.seat.keys.publicRaw };
    const at = Date.now();
    return { t: 'leader', id: this.seat.id, key: this.seat.keys.publicRaw, at, proof: await sign(proofKey, announceInput(this.seat.lockName, this.seat.id, this.seat.keys.publicRaw, at)) };
  }

  /**
   * Opens (or reuses) the pair channel with a follower and welcomes it there. Refused joins are counted:
   * without a valid proof (encrypted database), past the rate, not a key on the curve, or with no room. The proof is
   * checked first, so the rates are spent only by joins that hold the key: new followers share JOINS_PER_SECOND,
   * and each joined one has its own.
   */
  async welcome(followerKey: Uint8Array, proof: Uint8Array | undefined): Promise<void> {
    const proofKey = await this.seat.auth();
    if (proofKey && !(proof && (await verify(proofKey, proofInput('join', this.seat.lockName, this.seat.id, followerKey, this.seat.keys.publicRaw), proof)))) {
      this.seat.reject();
      return;
    }
    if (this.seat.closed || !this.seat.host) return;
    const peerId = bytesToBase64Url(followerKey);
    let peer = this.peers.get(peerId);
    if (!(peer ? peer.joins.take() : this.newJoins.take())) {
      this.seat.reject();
      return;
    }
    peer ??= await this.openPeer(peerId, followerKey);
    if (!peer || this.seat.closed || !this.seat.host) return;
    peer.lastUsed = performance.now();
    const welcomeProof = proofKey && (await sign(proofKey, proofInput('welcome', this.seat.lockName, this.seat.id, followerKey, this.seat.keys.publicRaw)));
    this.seat.post(peer.channel, { t: 'welcome', id: this.seat.id, ...(welcomeProof ? { proof: welcomeProof } : {}) } satisfies FromLeader);
    if (this.seat.host.locked) this.seat.post(peer.channel, { t: 'locked' } satisfies FromLeader);
  }

  /** The pair channel with a new follower (or the one a concurrent join opened meanwhile); undefined when refused. */
  private async openPeer(peerId: string, followerKey: Uint8Array): Promise<Peer | undefined> {
    const name = await pairName(this.seat.lockName, this.seat.keys, followerKey).catch(() => null);
    if (name === null) {
      this.seat.reject(); // not a key on the curve
      return undefined;
    }
    if (this.seat.closed || !this.seat.host) return undefined;
    const joined = this.peers.get(peerId);
    if (joined) return joined;
    if (this.peers.size >= MAX_PEERS && !this.evictIdlestPeer()) {
      this.seat.reject();
      return undefined;
    }
    const channel = new BroadcastChannel(name);
    const peer: Peer = { channel, key: followerKey, lastUsed: performance.now(), busy: 0, joins: new Bucket(PEER_JOINS_PER_SECOND, PEER_JOINS_AT_ONCE) };
    channel.onmessage = (event: MessageEvent<unknown>) => this.seat.guarded(() => this.receiveFromFollower(peerId, peer, event.data));
    channel.onmessageerror = () => this.seat.reject();
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
    this.seat.post(idlest[1].channel, { t: 'leaving' } satisfies FromLeader);
    idlest[1].channel.close();
    this.peers.delete(idlest[0]);
    return true;
  }

  private receiveFromFollower(peerId: string, peer: Peer, data: unknown): void {
    if (this.seat.closed) return;
    if (!isToLeader(data)) {
      this.seat.reject();
      return;
    }
    if (!this.seat.host) return;
    peer.lastUsed = performance.now();
    if (data.t === 'ping') this.seat.post(peer.channel, { t: 'pong', n: data.n } satisfies FromLeader);
    else if (data.t === 'abort') this.running.get(`${peerId}:${data.seq}`)?.abort();
    else this.serve(this.seat.host, peerId, peer, data);
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
      this.seat.reject();
      answer = Promise.resolve<Done>({ t: 'done', seq, error: toWireError(new EngramError(ErrorCode.INVALID_INPUT, `${method.slice(0, 40)}() runs only in the tab that holds the database, never for another tab`), stack) });
    }
    if (!answer) {
      const onProgress = (progress: Progress) => this.seat.post(channel(), { t: 'progress', seq, progress } satisfies FromLeader);
      // Its signal, for the follower's `abort` (registered before the call starts, which is before any abort of it).
      const key = `${peerId}:${seq}`;
      const controller = new AbortController();
      this.running.set(key, controller);
      // host.call refuses any method outside the Memory API with INVALID_INPUT; a sealed one (`unlock`) is opened here.
      const run = (isSealed(method) ? this.unlockFor(peer, args) : host.call(method, args, onProgress, retry, controller.signal)).finally(() => this.running.delete(key));
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
          this.seat.post(channel(), done);
        } catch (error) {
          const wire = toWireError(toEngramError(error, ErrorCode.WORKER_FAILED, `the answer of ${method}() could not be sent to the calling tab`), stack);
          this.seat.post(channel(), { t: 'done', seq, error: wire } satisfies FromLeader);
        }
      })
      .finally(() => peer.busy--);
    void this.serving.track(sent);
  }
}
