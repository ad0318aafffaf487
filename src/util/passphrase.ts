/** Keys from a passphrase, one way for every place Engram takes one (a database's key record, backups). */
import { EngramError, ErrorCode } from '../errors.js';

/** OWASP's floor for PBKDF2-HMAC-SHA-256 (2023); stored beside each salt, so it can rise without breaking old ones. */
export const PBKDF2_ITERATIONS = 600_000;
/** More than this is damage or an attack (a forged record that would hold the thread for minutes), not a setting. */
export const MAX_PBKDF2_ITERATIONS = 10_000_000;
/** Shortest new passphrase, in code points after NFC (opening what an older one protects takes any). */
export const MIN_PASSPHRASE_LENGTH = 8;

/** WEAK_PASSPHRASE for a new passphrase shorter than MIN_PASSPHRASE_LENGTH. */
export function checkNewPassphrase(passphrase: string, what: string): void {
  if ([...passphrase.normalize('NFC')].length < MIN_PASSPHRASE_LENGTH) {
    throw new EngramError(ErrorCode.WEAK_PASSPHRASE, `${what} needs at least ${MIN_PASSPHRASE_LENGTH} characters: it is all that protects the key`);
  }
}

/** PBKDF2-SHA-256 key material of `passphrase`, NFC-normalised so one passphrase typed on any system matches. */
export function passphraseMaterial(passphrase: string): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', new TextEncoder().encode(passphrase.normalize('NFC')), 'PBKDF2', false, ['deriveKey', 'deriveBits']);
}

/** The AES-GCM key and a check of it (to tell a wrong passphrase from damage), from 512 bits of PBKDF2. */
export async function passphraseKeys(passphrase: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Promise<{ aes: CryptoKey; check: string }> {
  return keysFromBits(new Uint8Array(await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, await passphraseMaterial(passphrase), 512)));
}

/** 512 derived bits as an AES-256-GCM key (the first half) and a check (a hash of the second, safe to store). */
export async function keysFromBits(bits: Uint8Array<ArrayBuffer>): Promise<{ aes: CryptoKey; check: string }> {
  const aes = await crypto.subtle.importKey('raw', bits.subarray(0, 32), 'AES-GCM', false, ['encrypt', 'decrypt']);
  const check = toBase64(new Uint8Array(await crypto.subtle.digest('SHA-256', bits.subarray(32))));
  return { aes, check };
}

export function toBase64(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

/** The bytes of base64 `text`, or null when it is not base64 (a stored field that was changed). */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}
