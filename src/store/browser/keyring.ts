/**
 * The key envelope of an encrypted database. Its pages are encrypted with a random 256-bit data key (wa-sqlite.ts); the
 * data key is stored only wrapped (AES-256-GCM) by a key-encryption key: derived from the passphrase with
 * PBKDF2-SHA-256, or the app's own CryptoKey. Changing the passphrase re-wraps the data key and re-encrypts nothing.
 *
 * Where: the envelope cannot live inside the database, whose every page is encrypted, so it is one record in the
 * IndexedDB database `engram-keys`, keyed like the eviction sentinel (sentinel.ts explains why IndexedDB, for both
 * backends). One record put in one IndexedDB transaction is atomic: a passphrase change is either stored whole or
 * not at all. It holds no secret in the clear: the salt, the parameters and the wrapped key.
 */
import { EngramError, ErrorCode } from '../../errors.js';
import { checkEncryption, type EncryptionOptions } from '../../util/encryption.js';
import { committed, readRecord, withRecords } from '../../util/idb.js';
import { PAGE_CIPHER } from './wa-sqlite.js';
import { checkNewPassphrase, MAX_PBKDF2_ITERATIONS, PBKDF2_ITERATIONS, passphraseMaterial } from '../../util/passphrase.js';

type Bytes = Uint8Array<ArrayBuffer>;

const KEYS_DATABASE = 'engram-keys';
const KEYS_STORE = 'databases';

/** The envelope's format: a reader refuses another one rather than guess. */
const ENVELOPE_FORMAT = 1;
const DATA_KEY_BYTES = 32;

interface KeyEnvelope {
  format: typeof ENVELOPE_FORMAT;
  /** sqlite3mc's cipher for the pages. */
  cipher: typeof PAGE_CIPHER;
  wrap: { kind: 'passphrase'; kdf: 'PBKDF2-SHA-256'; iterations: number; salt: Bytes } | { kind: 'app-key' };
  /** AES-GCM nonce and the wrapped data key (with its tag). */
  iv: Bytes;
  wrapped: Bytes;
}

/** `id`: the database's `backend:name`. The envelope names it in its associated data, so it unlocks no other. */
function associatedData(id: string): Bytes {
  return new TextEncoder().encode(`engram-data-key:${id}`);
}

function isEnvelope(value: unknown): value is KeyEnvelope {
  if (typeof value !== 'object' || value === null) return false;
  const envelope = value as KeyEnvelope;
  const wrap = envelope.wrap as { kind?: unknown; kdf?: unknown; iterations?: unknown; salt?: unknown } | undefined;
  const wrapOk =
    wrap?.kind === 'app-key' ||
    (wrap?.kind === 'passphrase' && wrap.kdf === 'PBKDF2-SHA-256' && Number.isSafeInteger(wrap.iterations) && (wrap.iterations as number) >= 1 && (wrap.iterations as number) <= MAX_PBKDF2_ITERATIONS && wrap.salt instanceof Uint8Array);
  return envelope.cipher === PAGE_CIPHER && wrapOk && envelope.iv instanceof Uint8Array && envelope.wrapped instanceof Uint8Array;
}

/**
 * The envelope of database `id`: null when it has none (it is not encrypted), `undefined` when IndexedDB cannot be
 * read here. Refuses an envelope of another format, which this Engram cannot unlock.
 */
async function readEnvelope(id: string): Promise<KeyEnvelope | null | undefined> {
  let value: unknown;
  try {
    value = await readRecord(KEYS_DATABASE, KEYS_STORE, id);
  } catch {
    return undefined;
  }
  if (value === undefined) return null;
  if (typeof value === 'object' && value !== null && (value as { format?: unknown }).format !== ENVELOPE_FORMAT) {
    throw new EngramError(ErrorCode.SCHEMA_TOO_NEW, `the key record of database "${id}" has format ${String((value as { format?: unknown }).format)}; this Engram reads format ${ENVELOPE_FORMAT}`);
  }
  if (!isEnvelope(value)) throw new EngramError(ErrorCode.STORE_FAILED, `the key record of database "${id}" is damaged`);
  return value;
}

/**
 * Stores `next` as the envelope of `id` if the stored one is still `expected` (null: none), in one transaction;
 * false when another tab changed it first.
 */
async function replaceEnvelope(id: string, expected: KeyEnvelope | null, next: KeyEnvelope): Promise<boolean> {
  return withRecords(KEYS_DATABASE, KEYS_STORE, async (db) => {
    const tx = db.transaction(KEYS_STORE, 'readwrite');
    const store = tx.objectStore(KEYS_STORE);
    let replaced = false;
    store.get(id).onsuccess = (event) => {
      const current = (event.target as IDBRequest<unknown>).result;
      const same = expected === null ? current === undefined : isEnvelope(current) && sameBytes(current.wrapped, expected.wrapped);
      if (!same) return;
      store.put(next, id);
      replaced = true;
    };
    await committed(tx);
    return replaced;
  });
}

function sameBytes(a: Bytes, b: Bytes): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/**
 * Key-encryption keys derived from a passphrase, per `encryption` object and salt: the worker starts the
 * derivation while it joins the tabs (`deriveEarly`), and the open that needs it finds it here.
 */
const derived = new WeakMap<EncryptionOptions, Map<string, Promise<CryptoKey>>>();

/** The key-encryption key: PBKDF2 from the passphrase (NFC, so one passphrase typed on any system matches), or the app's. */
function keyEncryptionKey(source: EncryptionOptions, wrap: KeyEnvelope['wrap']): Promise<CryptoKey> {
  if (source.key) return Promise.resolve(source.key);
  if (wrap.kind !== 'passphrase') return Promise.reject(new EngramError(ErrorCode.WRONG_KEY, 'this database is encrypted with an app key (encryption.key), not a passphrase'));
  let bySalt = derived.get(source);
  if (!bySalt) derived.set(source, (bySalt = new Map()));
  const id = `${wrap.iterations}:${Array.from(wrap.salt).join(',')}`;
  let kek = bySalt.get(id);
  if (!kek) {
    kek = passphraseMaterial(source.passphrase!)
      .then((material) =>
        crypto.subtle.deriveKey({ name: 'PBKDF2', hash: 'SHA-256', salt: wrap.salt, iterations: wrap.iterations }, material, { name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']),
      );
    bySalt.set(id, kek);
  }
  return kek;
}

/**
 * Starts deriving the key-encryption key of database `id` for `source` (the slow part of an encrypted open), so it
 * runs while the worker does other work. Best effort: the open itself reports any failure.
 */
export function deriveEarly(id: string, source: EncryptionOptions): void {
  if (source.key) return;
  readEnvelope(id)
    .then((envelope) => {
      if (envelope?.wrap.kind === 'passphrase') keyEncryptionKey(source, envelope.wrap).catch(() => undefined);
    })
    .catch(() => undefined);
}

/** AES-GCM with the KEK, through encrypt/decrypt or wrapKey/unwrapKey, whichever usages it has. */
async function seal(kek: CryptoKey, iv: Bytes, aad: Bytes, dataKey: Bytes): Promise<Bytes> {
  const params = { name: 'AES-GCM', iv, additionalData: aad };
  if (kek.usages.includes('encrypt')) return new Uint8Array(await crypto.subtle.encrypt(params, kek, dataKey));
  const raw = await crypto.subtle.importKey('raw', dataKey, 'AES-GCM', true, ['encrypt']);
  return new Uint8Array(await crypto.subtle.wrapKey('raw', raw, kek, params));
}

async function open(kek: CryptoKey, iv: Bytes, aad: Bytes, wrapped: Bytes): Promise<Bytes> {
  const params = { name: 'AES-GCM', iv, additionalData: aad };
  if (kek.usages.includes('decrypt')) return new Uint8Array(await crypto.subtle.decrypt(params, kek, wrapped));
  const raw = await crypto.subtle.unwrapKey('raw', wrapped, kek, params, 'AES-GCM', true, ['encrypt']);
  return new Uint8Array(await crypto.subtle.exportKey('raw', raw));
}

/** A new envelope for `dataKey`, wrapped for `source`. */
export async function wrapDataKey(id: string, dataKey: Bytes, source: EncryptionOptions): Promise<KeyEnvelope> {
  if (source.passphrase !== undefined) checkNewPassphrase(source.passphrase, 'a new passphrase');
  const wrap: KeyEnvelope['wrap'] =
    source.key
      ? { kind: 'app-key' }
      : { kind: 'passphrase', kdf: 'PBKDF2-SHA-256', iterations: PBKDF2_ITERATIONS, salt: crypto.getRandomValues(new Uint8Array(16)) };
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const wrapped = await seal(await keyEncryptionKey(source, wrap), iv, associatedData(id), dataKey);
  return { format: ENVELOPE_FORMAT, cipher: PAGE_CIPHER, wrap, iv, wrapped };
}

/** The data key `envelope` holds, or WRONG_KEY when `source` does not unwrap it (the GCM tag does not verify). */
export async function unwrapDataKey(id: string, envelope: KeyEnvelope, source: EncryptionOptions): Promise<Bytes> {
  if (source.passphrase !== undefined && envelope.wrap.kind === 'app-key') {
    throw new EngramError(ErrorCode.WRONG_KEY, 'this database is encrypted with an app key (encryption.key), not a passphrase');
  }
  const kek = await keyEncryptionKey(source, envelope.wrap);
  try {
    const dataKey = await open(kek, envelope.iv, associatedData(id), envelope.wrapped);
    if (dataKey.length !== DATA_KEY_BYTES) throw new Error('unexpected key length');
    return dataKey;
  } catch {
    throw new EngramError(ErrorCode.WRONG_KEY, `the ${source.key ? 'key' : 'passphrase'} does not unlock this database`);
  }
}

/**
 * The key a tab proves it holds the data key with when it leads or joins other tabs (worker/leader.ts): an HMAC
 * key, HKDF-SHA-256 of the data key. One-way, so a proof reveals nothing of the data key.
 */
export async function tabProofKey(dataKey: Bytes): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey('raw', dataKey, 'HKDF', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(32), info: new TextEncoder().encode('engram tab proof 1') },
    material,
    { name: 'HMAC', hash: 'SHA-256', length: 256 },
    false,
    ['sign', 'verify'],
  );
}

function newDataKey(): Bytes {
  return crypto.getRandomValues(new Uint8Array(DATA_KEY_BYTES));
}

/**
 * The data key of database `id` (`backend:name`) for `source`, or null for a plain database opened without one:
 * KEY_REQUIRED for an encrypted database opened without `encryption`, WRONG_KEY when `source` does not unlock it.
 * A database without an envelope opened with `encryption` is created encrypted when `create` is given: it gets a
 * new data key, which `create` must check can open the file (refusing an existing plain one) before the envelope
 * is stored. Without `create` (a tab joining the one that holds the database), that is NOT_ENCRYPTED.
 */
export async function unlock(
  id: string,
  name: string,
  source: EncryptionOptions | null,
  create?: (dataKey: Bytes) => Promise<void>,
): Promise<Bytes | null> {
  const envelope = await readEnvelope(id);
  if (envelope === undefined) {
    if (source) throw unreadable(name);
    return null;
  }
  if (!source) {
    if (envelope) throw keyRequired(name);
    return null;
  }
  if (envelope) return unwrapDataKey(id, envelope, source);
  if (!create) throw notEncrypted(name);
  const dataKey = newDataKey();
  const created = await wrapDataKey(id, dataKey, source);
  await create(dataKey);
  if (!(await replaceEnvelope(id, null, created))) throw new EngramError(ErrorCode.STORE_FAILED, `database "${name}" got a key record while it was being created: open it again`);
  return dataKey;
}

function unreadable(name: string): EngramError {
  return new EngramError(ErrorCode.STORE_FAILED, `cannot read the key record of database "${name}": IndexedDB is unavailable here`);
}

/** `cause`: the SQLite error of a file that did not open as a plain database (encrypted, or damaged). */
export function keyRequired(name: string, cause?: unknown): EngramError {
  const reason = cause === undefined ? 'is encrypted' : 'is not a plain database: it is encrypted or damaged';
  return new EngramError(ErrorCode.KEY_REQUIRED, `database "${name}" ${reason}: open it with createMemory({ encryption })`, { cause });
}

export function notEncrypted(name: string): EngramError {
  return new EngramError(
    ErrorCode.NOT_ENCRYPTED,
    `database "${name}" exists unencrypted, and Engram does not encrypt a database in place: export it, then import into a new database opened with encryption`,
  );
}

/**
 * Re-wraps database `id`'s data key for `next`; atomic (one IndexedDB transaction). WRONG_KEY when `current` does
 * not unlock it, or another tab changed it meanwhile; NOT_ENCRYPTED for a plain database.
 */
export async function changePassphrase(id: string, name: string, current: string, next: string): Promise<void> {
  checkEncryption({ passphrase: current });
  checkEncryption({ passphrase: next });
  const envelope = await readEnvelope(id);
  if (envelope === undefined) throw unreadable(name);
  if (envelope === null) throw notEncrypted(name);
  const dataKey = await unwrapDataKey(id, envelope, { passphrase: current });
  try {
    const rewrapped = await wrapDataKey(id, dataKey, { passphrase: next });
    if (!(await replaceEnvelope(id, envelope, rewrapped))) {
      throw new EngramError(ErrorCode.WRONG_KEY, `the passphrase of database "${name}" was changed by another tab meanwhile`);
    }
  } finally {
    dataKey.fill(0);
  }
}
