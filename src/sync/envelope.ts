/**
 * Sealed sync objects. Each object is AES-256-GCM over its entries, padded to a power of two (at least 1 KiB) so
 * its size says little about what changed; the associated data binds it to its name, device and sequence number,
 * so the storage cannot swap, replay or reorder objects without the check failing. The key comes from the sync
 * passphrase (PBKDF2, salt in the bucket in clear) or from a raw key the app hands over (HKDF), never from the
 * database's at-rest key.
 */
import { EngramError, ErrorCode, invalidInput } from '../errors.js';
import { checkNewPassphrase, fromBase64, keysFromBits, MAX_PBKDF2_ITERATIONS, PBKDF2_ITERATIONS, passphraseMaterial, toBase64 } from '../util/passphrase.js';
import type { SyncTransport } from './transport.js';

type Bytes = Uint8Array<ArrayBuffer>;

const MAGIC = [0x45, 0x47, 0x53, 0x31]; // "EGS1"
const IV_BYTES = 12;
/** Smallest padded plaintext: a lone small change looks like any other. */
const MIN_PADDED = 1024;
/** The key record's name under the prefix: salt and check in clear, no secret. */
export const KEY_RECORD = 'sync-key.json';

export type SyncSecret = { passphrase: string; iterations?: number } | { key: Uint8Array };

/** Fewest PBKDF2 iterations a new sync key (setup or rotation) may use: below it, INVALID_INPUT. */
export const MIN_SYNC_ITERATIONS = 100_000;

/**
 * Version 1 (earlier builds' first key): objects straight under the prefix. Version 2 adds `epoch`, a random id:
 * that key's objects live under `<prefix>e/<epoch>/`, so a rotation leaves every older object out of what the
 * remaining devices list, each name (bound into the associated data) names its epoch, and a record overwritten by
 * another device setting up the same bucket at once leaves that device's objects where nobody reads. Version 3
 * (every record made now) adds `generation` (1 at setup, one more per rotation) and `mac`, an HMAC of the record
 * under a key derived with the sync key: the storage can neither alter a record nor pass an older one off as
 * current to a device that remembers a later one (sync state `keyRecord`).
 */
interface KeyRecord {
  version: 1 | 2 | 3;
  epoch?: string;
  generation?: number;
  kdf: 'PBKDF2-SHA-256' | 'HKDF-SHA-256';
  salt: string;
  iterations?: number;
  check: string;
  mac?: string;
}

/** The bucket's current key: its AES key, its epoch ('' for a version 1 record), generation (0 before version 3) and the record's text as read. */
export interface SyncKey {
  aes: CryptoKey;
  epoch: string;
  generation: number;
  record: string;
}

/** The last key record a device accepted: a record of an older generation is refused from then on, and so is none. */
export interface AcceptedKey {
  epoch: string;
  generation: number;
}

function keyRefused(reason: 'older' | 'altered' | 'vanished', message: string): EngramError {
  return new EngramError(ErrorCode.SYNC_TAMPERED, `the bucket's sync key record (${KEY_RECORD}) was refused: ${message}`, { details: { name: KEY_RECORD, keyRecord: reason } });
}

/** Where the objects of `epoch` live: straight under the prefix for the first key, else under `e/<epoch>/`. */
export function epochBase(prefix: string, epoch: string): string {
  return epoch === '' ? prefix : `${prefix}e/${epoch}/`;
}

/**
 * The sync key: read from the bucket's key record (made on first use) and checked against it, so a wrong
 * passphrase or key is WRONG_KEY and not a flood of refused objects. `known`: the key this device derived last;
 * reused while the record is byte for byte the same, so only a changed record (a rotation) costs a derivation.
 */
export async function syncKey(transport: SyncTransport, prefix: string, secret: SyncSecret, known?: SyncKey | null, accepted?: AcceptedKey): Promise<SyncKey> {
  const name = prefix + KEY_RECORD;
  let stored = await transport.get(name, { maxBytes: 64 * 1024 });
  if (stored === null) {
    // Made once, at setup: a record gone later is withheld or deleted, and a new one would fork the bucket's key.
    if (accepted !== undefined) throw keyRefused('vanished', `it is gone, though this device accepted generation ${accepted.generation} of it; restore it (or rotate the key from a device that still reads it)`);
    const made = await newKeyRecord(secret);
    await transport.put(name, new TextEncoder().encode(made.record));
    // Another device setting up the bucket at once may have written its own record: the one stored is the bucket's.
    stored = await transport.get(name);
    if (stored === null || new TextDecoder().decode(stored) === made.record) return made;
  }
  const text = new TextDecoder().decode(stored);
  if (known && known.record === text) return known;
  const record = readKeyRecord(stored);
  const generation = record.version === 3 ? record.generation! : 0;
  // Before the check: an old record put back is a replay, not a prompt to type the old secret.
  if (accepted !== undefined && generation < accepted.generation) {
    throw keyRefused('older', `it is generation ${generation}, older than generation ${accepted.generation} this device accepted (an old record put back, e.g. by a removed device)`);
  }
  const keys = await derive(secret, record);
  if (keys.check !== record.check) throw new EngramError(ErrorCode.WRONG_KEY, 'the sync passphrase or key does not match the bucket\'s current one (it may have been rotated)');
  if (record.version === 3 && record.mac !== (await recordMac(keys.mac, record))) throw keyRefused('altered', 'its authentication failed (changed in the bucket)');
  return { aes: keys.aes, epoch: record.epoch ?? '', generation, record: text };
}

/** The record's fields as its MAC covers them. */
function macText(record: KeyRecord): string {
  return JSON.stringify([record.version, record.epoch, record.generation, record.kdf, record.salt, record.iterations ?? null, record.check]);
}

async function recordMac(key: CryptoKey, record: KeyRecord): Promise<string> {
  return toBase64(new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(macText(record)))));
}

/** A fresh key record for `secret` (new salt, new check, new epoch), not written yet; `generation`: 1 at setup, one more than the current record's for a rotation. */
export async function newKeyRecord(secret: SyncSecret, generation = 1): Promise<SyncKey> {
  checkNewSecret(secret);
  const passphrase = 'passphrase' in secret;
  const record: KeyRecord = {
    version: 3,
    epoch: [...crypto.getRandomValues(new Uint8Array(8))].map((b) => b.toString(16).padStart(2, '0')).join(''),
    generation,
    kdf: passphrase ? 'PBKDF2-SHA-256' : 'HKDF-SHA-256',
    salt: toBase64(crypto.getRandomValues(new Uint8Array(16))),
    ...(passphrase ? { iterations: secret.iterations ?? PBKDF2_ITERATIONS } : {}),
    check: '',
  };
  const keys = await derive(secret, record);
  record.check = keys.check;
  record.mac = await recordMac(keys.mac, record);
  return { aes: keys.aes, epoch: record.epoch ?? '', generation, record: JSON.stringify(record) };
}

/** What a new key needs (WEAK_PASSPHRASE, INVALID_INPUT): a passphrase of 8 characters and MIN_SYNC_ITERATIONS, or 32 key bytes. */
export function checkNewSecret(secret: SyncSecret): void {
  if ('passphrase' in secret) {
    checkNewPassphrase(secret.passphrase, 'a sync passphrase');
    const { iterations } = secret;
    if (iterations !== undefined && (!Number.isSafeInteger(iterations) || iterations < MIN_SYNC_ITERATIONS || iterations > MAX_PBKDF2_ITERATIONS)) {
      throw invalidInput(`sync iterations must be an integer from ${MIN_SYNC_ITERATIONS} to ${MAX_PBKDF2_ITERATIONS}`);
    }
  } else if (!(secret.key instanceof Uint8Array) || secret.key.length < 32) throw invalidInput('sync key must be a Uint8Array of at least 32 random bytes');
}

/** A new sync secret as `rotateSyncKey` takes it: exactly one of a passphrase (with its iterations) or a raw key. */
export function checkSyncKeyInput(next: unknown): SyncSecret {
  const { passphrase, key, iterations } = (typeof next === 'object' && next !== null ? next : {}) as { passphrase?: unknown; key?: unknown; iterations?: unknown };
  if ((passphrase === undefined) === (key === undefined)) throw invalidInput('rotateSyncKey needs exactly one of { passphrase } or { key }');
  if (passphrase !== undefined && typeof passphrase !== 'string') throw invalidInput('rotateSyncKey: passphrase must be a string');
  if (iterations !== undefined && (passphrase === undefined || !Number.isSafeInteger(iterations) || (iterations as number) < MIN_SYNC_ITERATIONS || (iterations as number) > MAX_PBKDF2_ITERATIONS)) {
    throw invalidInput(`rotateSyncKey: iterations must be an integer from ${MIN_SYNC_ITERATIONS} to ${MAX_PBKDF2_ITERATIONS}, with a passphrase`);
  }
  if (key !== undefined && (!(key instanceof Uint8Array) || key.length < 32)) throw invalidInput('rotateSyncKey: key must be a Uint8Array of at least 32 random bytes');
  return passphrase !== undefined ? { passphrase, ...(iterations !== undefined ? { iterations: iterations as number } : {}) } : { key: key as Uint8Array };
}

function readKeyRecord(bytes: Uint8Array): KeyRecord {
  let record: Partial<KeyRecord> | null = null;
  try {
    record = JSON.parse(new TextDecoder().decode(bytes)) as Partial<KeyRecord>;
  } catch {
    // Reported below.
  }
  const valid =
    record !== null && typeof record === 'object' &&
    (record.version === 1
      ? record.epoch === undefined
      : (record.version === 2 || (record.version === 3 && Number.isSafeInteger(record.generation) && record.generation! >= 1 && typeof record.mac === 'string')) &&
        typeof record.epoch === 'string' && /^[0-9a-z]{1,64}$/.test(record.epoch)) &&
    typeof record.salt === 'string' && typeof record.check === 'string' &&
    (record.kdf === 'HKDF-SHA-256' || (record.kdf === 'PBKDF2-SHA-256' && Number.isSafeInteger(record.iterations) && record.iterations! >= 1 && record.iterations! <= MAX_PBKDF2_ITERATIONS));
  if (record !== null && typeof record === 'object' && typeof record.version === 'number' && record.version > 3) {
    throw new EngramError(ErrorCode.SYNC_FAILED, `the bucket's sync key record (${KEY_RECORD}) is version ${record.version}, written by a newer Engram: update this app`);
  }
  if (!valid) throw new EngramError(ErrorCode.SYNC_TAMPERED, `the bucket's sync key record (${KEY_RECORD}) is damaged`);
  return record as KeyRecord;
}

/** The AES key and check (keysFromBits), and the record's MAC key: a hash of the check's half under its own label, so the public check does not give it away. */
async function split(bits: Uint8Array<ArrayBuffer>): Promise<{ aes: CryptoKey; check: string; mac: CryptoKey }> {
  const label = new TextEncoder().encode('engram-sync/key-record\n');
  const input = new Uint8Array(label.length + 32);
  input.set(label, 0);
  input.set(bits.subarray(32, 64), label.length);
  const macBits = await crypto.subtle.digest('SHA-256', input);
  const mac = await crypto.subtle.importKey('raw', macBits, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return { ...(await keysFromBits(bits)), mac };
}

async function derive(secret: SyncSecret, record: KeyRecord): Promise<{ aes: CryptoKey; check: string; mac: CryptoKey }> {
  const salt = fromBase64(record.salt);
  if (salt === null) throw new EngramError(ErrorCode.SYNC_TAMPERED, `the bucket's sync key record (${KEY_RECORD}) is damaged: its salt is not base64`);
  if ('passphrase' in secret) {
    if (typeof secret.passphrase !== 'string') throw invalidInput('sync passphrase must be a string');
    if (record.kdf !== 'PBKDF2-SHA-256') throw new EngramError(ErrorCode.WRONG_KEY, 'this bucket was set up with a raw sync key, not a passphrase');
    return split(new Uint8Array(await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations: record.iterations! }, await passphraseMaterial(secret.passphrase), 512)));
  }
  if (!(secret.key instanceof Uint8Array) || secret.key.length < 32) throw invalidInput('sync key must be a Uint8Array of at least 32 random bytes');
  if (record.kdf !== 'HKDF-SHA-256') throw new EngramError(ErrorCode.WRONG_KEY, 'this bucket was set up with a sync passphrase, not a raw key');
  const material = await crypto.subtle.importKey('raw', new Uint8Array(secret.key), 'HKDF', false, ['deriveBits']);
  return split(new Uint8Array(await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt, info: new TextEncoder().encode('engram-sync/1') }, material, 512)));
}

function associatedData(name: string, device: string, seq: number): Bytes {
  return new TextEncoder().encode(`engram-sync/1\n${name}\n${device}\n${seq}`);
}

/** The padded plaintext size for a payload of `length` bytes (4 more for its length). */
export function paddedSize(length: number): number {
  let size = MIN_PADDED;
  while (size < length + 4) size *= 2;
  return size;
}

export async function seal(key: CryptoKey, name: string, device: string, seq: number, payload: unknown): Promise<Bytes> {
  const json = new TextEncoder().encode(JSON.stringify(payload));
  const plain = new Uint8Array(paddedSize(json.length));
  new DataView(plain.buffer).setUint32(0, json.length, true);
  plain.set(json, 4);
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: associatedData(name, device, seq) }, key, plain));
  const out = new Uint8Array(MAGIC.length + IV_BYTES + sealed.length);
  out.set(MAGIC, 0);
  out.set(iv, MAGIC.length);
  out.set(sealed, MAGIC.length + IV_BYTES);
  return out;
}

/** The payload of a sealed object, or SYNC_TAMPERED when it was changed, cut, moved to another name or replayed. */
export async function open(key: CryptoKey, name: string, device: string, seq: number, bytes: Uint8Array): Promise<unknown> {
  const refuse = (why: string, cause?: unknown) =>
    new EngramError(ErrorCode.SYNC_TAMPERED, `sync object ${name} was refused: ${why}; it is set aside, and what follows it from the same device waits`, { cause, details: { name } });
  if (bytes.length < MAGIC.length + IV_BYTES + 16 || MAGIC.some((b, i) => bytes[i] !== b)) throw refuse('not a sealed sync object');
  let plain: Uint8Array;
  try {
    const iv = new Uint8Array(bytes.subarray(MAGIC.length, MAGIC.length + IV_BYTES));
    plain = new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv, additionalData: associatedData(name, device, seq) }, key, new Uint8Array(bytes.subarray(MAGIC.length + IV_BYTES))));
  } catch (error) {
    throw refuse('its authentication failed (changed, or not written under this name)', error);
  }
  const length = new DataView(plain.buffer, plain.byteOffset).getUint32(0, true);
  if (length + 4 > plain.length) throw refuse('its length field is out of range');
  try {
    return JSON.parse(new TextDecoder().decode(plain.subarray(4, 4 + length)));
  } catch (error) {
    throw refuse('its content does not parse', error);
  }
}
