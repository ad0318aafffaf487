/**
 * Encrypted backups: what `export()` (or `salvageMemory()`) returns, sealed under a passphrase into one file an app
 * can let the user download or keep anywhere, and opened again for `import()`. The format is versioned:
 *
 *   "ENGRAMBK" | header length (uint32, little-endian) | header (JSON) | AES-256-GCM(gzip(JSON of the records))
 *
 * The header (KDF, salt, IV, a key check) is the cipher's associated data, so changing any of it fails the open.
 * The key check tells a wrong passphrase (WRONG_KEY) from a damaged file (STORE_CORRUPT).
 */
import { EngramError, ErrorCode, invalidInput } from '../errors.js';
import type { MemoryRecord } from '../types.js';
import { checkNewPassphrase, fromBase64, MAX_PBKDF2_ITERATIONS, PBKDF2_ITERATIONS, passphraseKeys as deriveKeys, toBase64 } from '../util/passphrase.js';

type Bytes = Uint8Array<ArrayBuffer>;

const MAGIC = 'ENGRAMBK';
/** The format this code writes; it opens this one only (SCHEMA_TOO_NEW for a later one). */
export const BACKUP_VERSION = 1;

interface BackupHeader {
  version: number;
  kdf: 'PBKDF2-SHA-256';
  iterations: number;
  /** base64 */
  salt: string;
  cipher: 'AES-256-GCM';
  iv: string;
  /** base64 of SHA-256 over the derived check bits: equal when the passphrase is right. */
  check: string;
}

export interface SealBackupOptions {
  /** PBKDF2 iterations. Default 600,000 (OWASP's floor for PBKDF2-SHA-256); at most 10,000,000. */
  iterations?: number;
}

/**
 * Seals `records` (as `export()` returns them) under `passphrase` (at least 8 characters, else WEAK_PASSPHRASE).
 *
 * @example
 * const file = await sealBackup(await memory.export(), passphrase);
 * // later, on any device: await memory.import(await openBackup(file, passphrase));
 */
export async function sealBackup(records: readonly MemoryRecord[], passphrase: string, options: SealBackupOptions = {}): Promise<Uint8Array<ArrayBuffer>> {
  if (!Array.isArray(records)) throw invalidInput('sealBackup: records must be an array, as export() returns');
  if (typeof passphrase !== 'string') throw invalidInput('sealBackup: passphrase must be a string');
  checkNewPassphrase(passphrase, 'a backup passphrase');
  const iterations = options.iterations ?? PBKDF2_ITERATIONS;
  if (!Number.isSafeInteger(iterations) || iterations < 100_000 || iterations > MAX_PBKDF2_ITERATIONS) {
    throw invalidInput(`sealBackup: iterations must be an integer from 100,000 to ${MAX_PBKDF2_ITERATIONS.toLocaleString('en')}, got ${String(iterations)}`);
  }
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const keys = await deriveKeys(passphrase, salt, iterations);
  const header: BackupHeader = { version: BACKUP_VERSION, kdf: 'PBKDF2-SHA-256', iterations, salt: toBase64(salt), cipher: 'AES-256-GCM', iv: toBase64(iv), check: keys.check };
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const prefix = new Uint8Array(MAGIC.length + 4 + headerBytes.length);
  prefix.set(new TextEncoder().encode(MAGIC));
  new DataView(prefix.buffer).setUint32(MAGIC.length, headerBytes.length, true);
  prefix.set(headerBytes, MAGIC.length + 4);
  const plain = await gzip(new TextEncoder().encode(JSON.stringify(records)));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: prefix }, keys.aes, plain));
  const out = new Uint8Array(prefix.length + sealed.length);
  out.set(prefix);
  out.set(sealed, prefix.length);
  return out;
}

/**
 * The records of a backup made by `sealBackup`, for `import()`. WRONG_KEY for another passphrase, STORE_CORRUPT for
 * a changed or cut file, SCHEMA_TOO_NEW for a later format, INVALID_INPUT for a file that is no Engram backup.
 *
 * @example
 * const records = await openBackup(new Uint8Array(await file.arrayBuffer()), passphrase);
 * await memory.import(records);
 */
export async function openBackup(backup: Uint8Array | ArrayBuffer, passphrase: string): Promise<MemoryRecord[]> {
  if (!(backup instanceof Uint8Array) && !(backup instanceof ArrayBuffer)) throw invalidInput('openBackup: the backup must be a Uint8Array or an ArrayBuffer');
  const bytes: Bytes = new Uint8Array(backup);
  if (typeof passphrase !== 'string') throw invalidInput('openBackup: passphrase must be a string');
  const { header, prefix } = readHeader(bytes);
  const keys = await deriveKeys(passphrase, headerField(header.salt), header.iterations);
  if (keys.check !== header.check) throw new EngramError(ErrorCode.WRONG_KEY, 'openBackup: the passphrase does not open this backup');
  let records: unknown;
  try {
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: headerField(header.iv), additionalData: prefix }, keys.aes, bytes.subarray(prefix.length));
    records = JSON.parse(new TextDecoder().decode(await gunzip(new Uint8Array(plain))));
  } catch (error) {
    throw new EngramError(ErrorCode.STORE_CORRUPT, 'openBackup: the backup is damaged (it was changed or cut short after it was sealed)', { cause: error });
  }
  if (!Array.isArray(records)) throw new EngramError(ErrorCode.STORE_CORRUPT, 'openBackup: the backup holds no list of memories');
  return records as MemoryRecord[];
}

function readHeader(bytes: Bytes): { header: BackupHeader; prefix: Bytes } {
  const notBackup = (why: string) => invalidInput(`openBackup: this is not an Engram backup (${why})`);
  if (bytes.length < MAGIC.length + 4 || new TextDecoder().decode(bytes.subarray(0, MAGIC.length)) !== MAGIC) throw notBackup('no ENGRAMBK mark');
  const length = new DataView(bytes.buffer, bytes.byteOffset + MAGIC.length, 4).getUint32(0, true);
  const end = MAGIC.length + 4 + length;
  if (length > 4096 || end > bytes.length) throw new EngramError(ErrorCode.STORE_CORRUPT, 'openBackup: the backup is damaged (its header runs past its end)');
  let header: Partial<BackupHeader>;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(MAGIC.length + 4, end))) as Partial<BackupHeader>;
  } catch (error) {
    throw new EngramError(ErrorCode.STORE_CORRUPT, 'openBackup: the backup is damaged (its header does not read)', { cause: error });
  }
  if (typeof header.version === 'number' && header.version > BACKUP_VERSION) {
    throw new EngramError(ErrorCode.SCHEMA_TOO_NEW, `openBackup: backup format ${header.version} is newer than this Engram's (${BACKUP_VERSION}); open it with a newer Engram`);
  }
  const valid =
    header.version === BACKUP_VERSION && header.kdf === 'PBKDF2-SHA-256' && header.cipher === 'AES-256-GCM' &&
    Number.isSafeInteger(header.iterations) && header.iterations! >= 1 && header.iterations! <= MAX_PBKDF2_ITERATIONS &&
    typeof header.salt === 'string' && typeof header.iv === 'string' && typeof header.check === 'string';
  if (!valid) throw new EngramError(ErrorCode.STORE_CORRUPT, 'openBackup: the backup is damaged (its header is not one this Engram wrote)');
  return { header: header as BackupHeader, prefix: bytes.subarray(0, end) };
}

async function gzip(bytes: Bytes): Promise<Bytes> {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream('gzip'))).arrayBuffer());
}

async function gunzip(bytes: Bytes): Promise<Bytes> {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer());
}

/** A base64 header field's bytes; STORE_CORRUPT when it does not decode. */
function headerField(text: string): Bytes {
  const bytes = fromBase64(text);
  if (bytes === null) throw new EngramError(ErrorCode.STORE_CORRUPT, 'openBackup: the backup is damaged (a header field does not read)');
  return bytes;
}
