/**
 * The keys of the tabs' protocol (worker/leader.ts): each worker's ECDH pair, the pair channel's name derived from
 * two of them, the key that seals an unlock's data key, and what a tab proof (HMAC) signs.
 */

export interface Keys {
  pair: CryptoKeyPair;
  /** The public key, uncompressed P-256 point (65 bytes): what travels on the group channel. */
  publicRaw: Uint8Array;
}

const CURVE = { name: 'ECDH', namedCurve: 'P-256' } as const;

export async function makeKeys(): Promise<Keys> {
  const pair = (await crypto.subtle.generateKey(CURVE, false, ['deriveBits'])) as CryptoKeyPair;
  return { pair, publicRaw: new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey)) };
}

/** The pair channel's name: a hash of the ECDH secret, which only the two key holders can compute. */
export async function pairName(lockName: string, own: Keys, peerRaw: Uint8Array): Promise<string> {
  const peer = await crypto.subtle.importKey('raw', peerRaw as Uint8Array<ArrayBuffer>, CURVE, false, []);
  const secret = new Uint8Array(await crypto.subtle.deriveBits({ name: 'ECDH', public: peer }, own.pair.privateKey, 256));
  const label = new TextEncoder().encode(`engram pair channel\0${lockName}\0`);
  const input = new Uint8Array(label.length + secret.length);
  input.set(label);
  input.set(secret, label.length);
  return `${lockName}:pair:${bytesToBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', input)))}`;
}

/** The AES-GCM key a follower seals an unlock's data key with: HKDF of the pair's ECDH secret, apart from its name's. */
export async function unlockKey(lockName: string, own: Keys, peerRaw: Uint8Array): Promise<CryptoKey> {
  const peer = await crypto.subtle.importKey('raw', peerRaw as Uint8Array<ArrayBuffer>, CURVE, false, []);
  const secret = await crypto.subtle.deriveBits({ name: 'ECDH', public: peer }, own.pair.privateKey, 256);
  const material = await crypto.subtle.importKey('raw', secret, 'HKDF', false, ['deriveKey']);
  const info = new TextEncoder().encode(`engram unlock\0${lockName}`);
  return crypto.subtle.deriveKey({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(32), info }, material, { name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
}

export function unlockInput(lockName: string, leaderId: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`engram unlock\0${lockName}\0${leaderId}`);
}

/** What a tab proof signs: its kind, the lock, the leader's id and both public keys. */
export function proofInput(kind: 'join' | 'welcome', lockName: string, leaderId: string, followerKey: Uint8Array, leaderKey: Uint8Array): Uint8Array<ArrayBuffer> {
  const label = new TextEncoder().encode(`engram tab proof\0${kind}\0${lockName}\0${leaderId}\0`);
  const input = new Uint8Array(label.length + followerKey.length + leaderKey.length);
  input.set(label);
  input.set(followerKey, label.length);
  input.set(leaderKey, label.length + followerKey.length);
  return input;
}

export async function sign(key: CryptoKey, input: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, input));
}

export function verify(key: CryptoKey, input: Uint8Array<ArrayBuffer>, proof: Uint8Array): Promise<boolean> {
  return crypto.subtle.verify('HMAC', key, proof as Uint8Array<ArrayBuffer>, input).catch(() => false);
}

/** What a leader's announcement proof signs (encrypted database): the lock, its id, when, and its public key. */
export function announceInput(lockName: string, leaderId: string, leaderKey: Uint8Array, at: number): Uint8Array<ArrayBuffer> {
  const label = new TextEncoder().encode(`engram tab proof\0leader\0${lockName}\0${leaderId}\0${at}\0`);
  const input = new Uint8Array(label.length + leaderKey.length);
  input.set(label);
  input.set(leaderKey, label.length);
  return input;
}

export function candidateKey(leaderId: string, leaderKey: Uint8Array): string {
  return `${leaderId} ${bytesToBase64Url(leaderKey)}`;
}

export function bytesToBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}
