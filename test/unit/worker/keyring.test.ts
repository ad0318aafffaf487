/**
 * The key envelope's cryptography (src/store/browser/keyring.ts) in Node's WebCrypto: the same calls the worker makes. Where
 * the envelope is stored (IndexedDB) and the database it unlocks are tested in Chromium (test/browser/encryption.test.ts).
 */
import { describe, expect, test } from 'vitest';
import { isEngramError } from '../../../src/errors.js';
import { checkEncryption } from '../../../src/contract/protocol.js';
import { PBKDF2_ITERATIONS } from '../../../src/util/passphrase.js';
import { unwrapDataKey, wrapDataKey } from '../../../src/store/browser/keyring.js';

const dataKey = () => crypto.getRandomValues(new Uint8Array(32));

async function codeOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return 'resolved';
  } catch (error) {
    return isEngramError(error) ? error.code : String(error);
  }
}

describe('passphrase envelopes', () => {
  test('wrap then unwrap gives the data key back; the envelope holds neither the key nor the passphrase', async () => {
    const key = dataKey();
    const envelope = await wrapDataKey('opfs:notes', key, { passphrase: 'hunter2 but longer' });
    expect(envelope.wrap).toMatchObject({ kind: 'passphrase', kdf: 'PBKDF2-SHA-256', iterations: PBKDF2_ITERATIONS });
    expect(PBKDF2_ITERATIONS).toBeGreaterThanOrEqual(600_000);
    expect(await unwrapDataKey('opfs:notes', envelope, { passphrase: 'hunter2 but longer' })).toEqual(key);
    const stored = JSON.stringify(envelope, (_, value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString('hex') : value));
    expect(stored).not.toContain(Buffer.from(key).toString('hex'));
    expect(stored).not.toContain('hunter2');
    // 32 bytes of key and GCM's 16-byte tag.
    expect(envelope.wrapped).toHaveLength(48);
  });

  test('a wrong passphrase, or the envelope of another database, is WRONG_KEY', async () => {
    const envelope = await wrapDataKey('opfs:notes', dataKey(), { passphrase: 'right passphrase' });
    expect(await codeOf(() => unwrapDataKey('opfs:notes', envelope, { passphrase: 'wrong' }))).toBe('WRONG_KEY');
    // The database's id is the GCM associated data: a key record copied onto another database unlocks nothing.
    expect(await codeOf(() => unwrapDataKey('opfs:other', envelope, { passphrase: 'right passphrase' }))).toBe('WRONG_KEY');
    const tampered = { ...envelope, wrapped: envelope.wrapped.map((byte, i) => (i === 0 ? byte ^ 1 : byte)) };
    expect(await codeOf(() => unwrapDataKey('opfs:notes', tampered, { passphrase: 'right passphrase' }))).toBe('WRONG_KEY');
  });

  test('each wrap draws a fresh salt and nonce', async () => {
    const key = dataKey();
    const [a, b] = await Promise.all([wrapDataKey('idb:x', key, { passphrase: 'same passphrase' }), wrapDataKey('idb:x', key, { passphrase: 'same passphrase' })]);
    expect(a.iv).not.toEqual(b.iv);
    if (a.wrap.kind !== 'passphrase' || b.wrap.kind !== 'passphrase') throw new Error('expected passphrase envelopes');
    expect(a.wrap.salt).not.toEqual(b.wrap.salt);
    expect(a.wrapped).not.toEqual(b.wrapped);
  });

  test('a passphrase typed composed or decomposed unlocks the same envelope (NFC)', async () => {
    const key = dataKey();
    const envelope = await wrapDataKey('opfs:notes', key, { passphrase: 'caf\u00e9 cr\u00e8me' });
    expect(await unwrapDataKey('opfs:notes', envelope, { passphrase: 'cafe\u0301 cre\u0300me' })).toEqual(key);
  });
});

describe('app key envelopes', () => {
  test.each([
    [['encrypt', 'decrypt']],
    [['wrapKey', 'unwrapKey']],
  ] as const)('a non-extractable AES-GCM key with usages %j wraps and unwraps; another key or a passphrase is WRONG_KEY', async (usages) => {
    const appKey = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, [...usages]);
    const key = dataKey();
    const envelope = await wrapDataKey('opfs:notes', key, { key: appKey });
    expect(envelope.wrap).toEqual({ kind: 'app-key' });
    expect(await unwrapDataKey('opfs:notes', envelope, { key: appKey })).toEqual(key);
    const other = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, [...usages]);
    expect(await codeOf(() => unwrapDataKey('opfs:notes', envelope, { key: other }))).toBe('WRONG_KEY');
    expect(await codeOf(() => unwrapDataKey('opfs:notes', envelope, { passphrase: 'x' }))).toBe('WRONG_KEY');
  });
});

describe('checkEncryption', () => {
  test('refuses anything but one non-empty passphrase or one AES-GCM key with usable usages, with INVALID_INPUT', async () => {
    const cbc = await crypto.subtle.generateKey({ name: 'AES-CBC', length: 256 }, false, ['encrypt', 'decrypt']);
    const signOnly = await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const gcmEncryptOnly = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt']);
    const gcm = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
    const bad: unknown[] = [null, 'pass', [], {}, { passphrase: '' }, { passphrase: 42 }, { key: 'k' }, { key: cbc }, { key: signOnly }, { key: gcmEncryptOnly }, { passphrase: 'p', key: gcm }];
    for (const options of bad) {
      expect(() => checkEncryption(options), JSON.stringify(options)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    }
    expect(() => checkEncryption({ passphrase: 'p' })).not.toThrow();
    expect(() => checkEncryption({ key: gcm })).not.toThrow();
  });
});

describe('weak passphrases and damaged key records', () => {
  test('a new key record needs a passphrase of 8 characters (after NFC); unlocking takes any; extreme iterations are damage', async () => {
    expect(await codeOf(() => wrapDataKey('opfs:notes', dataKey(), { passphrase: 'hunter2' }))).toBe('WEAK_PASSPHRASE');
    // Five characters once "e" and the combining acute are composed: still too short.
    expect(await codeOf(() => wrapDataKey('opfs:notes', dataKey(), { passphrase: 'cafe\u0301!!' }))).toBe('WEAK_PASSPHRASE');
    const envelope = await wrapDataKey('opfs:notes', dataKey(), { passphrase: 'eight ch' });
    expect(await codeOf(() => unwrapDataKey('opfs:notes', envelope, { passphrase: 'short' }))).toBe('WRONG_KEY');
  });
});
