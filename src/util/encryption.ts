import { invalidInput } from '../errors.js';

/**
 * Encryption at rest (docs/worker.md): a passphrase, or the app's own AES-GCM `CryptoKey` (it may be
 * non-extractable; usages 'encrypt' and 'decrypt', or 'wrapKey' and 'unwrapKey'). Either one wraps the random
 * key that encrypts the database.
 */
export type EncryptionOptions = { passphrase: string; key?: never } | { key: CryptoKey; passphrase?: never };

/** INVALID_INPUT unless `options` is `{ passphrase }` (a non-empty string) or `{ key }` (an AES-GCM CryptoKey). */
export function checkEncryption(options: unknown): asserts options is EncryptionOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidInput('encryption must be { passphrase } or { key }');
  const { passphrase, key } = options as { passphrase?: unknown; key?: unknown };
  if ((passphrase === undefined) === (key === undefined)) throw invalidInput('encryption takes exactly one of passphrase and key');
  if (passphrase !== undefined) {
    if (typeof passphrase !== 'string' || passphrase.length === 0) throw invalidInput('encryption.passphrase must be a non-empty string');
    return;
  }
  if (typeof CryptoKey === 'undefined' || !(key instanceof CryptoKey) || key.algorithm.name !== 'AES-GCM') {
    throw invalidInput('encryption.key must be an AES-GCM CryptoKey');
  }
  const usages = new Set(key.usages);
  if (!((usages.has('encrypt') && usages.has('decrypt')) || (usages.has('wrapKey') && usages.has('unwrapKey')))) {
    throw invalidInput("encryption.key needs the usages 'encrypt' and 'decrypt' (or 'wrapKey' and 'unwrapKey')");
  }
}
