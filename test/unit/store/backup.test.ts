/** Encrypted backups: sealed from a real engine's export, opened into another, refused with a code when anything is off. */
import { describe, expect, it } from 'vitest';
import { createEngine, memoryStore, openBackup, sealBackup } from '../../../src/node.js';

const PASS = 'correct horse battery';
const FAST = { iterations: 100_000 };

async function filledExport() {
  const engine = await createEngine({ store: memoryStore() });
  await engine.add([
    { text: 'The canary-zebra-4471 lives in the greenhouse', tags: ['secret-tag-9083'], meta: { note: 'meta-value-5521' } },
    { text: 'Tuesday standup moved to 10am' },
  ]);
  const records = await engine.export();
  await engine.close();
  return records;
}

describe('sealBackup / openBackup', () => {
  it('round-trips export() into another engine, which finds the memories', async () => {
    const records = await filledExport();
    const file = await sealBackup(records, PASS, FAST);
    const restored = await createEngine({ store: memoryStore() });
    await restored.import(await openBackup(file, PASS));
    expect(await restored.export()).toEqual(records);
    const { hits } = await restored.search('greenhouse canary', { mode: 'lexical' });
    expect(hits[0]?.text).toContain('greenhouse');
    await restored.close();
  });

  it('holds no text, tag or meta value in clear', async () => {
    const file = await sealBackup(await filledExport(), PASS, FAST);
    const latin1 = Array.from(file, (b) => String.fromCharCode(b)).join('');
    for (const canary of ['canary-zebra-4471', 'secret-tag-9083', 'meta-value-5521', 'greenhouse', 'standup']) expect(latin1).not.toContain(canary);
  });

  it('refuses another passphrase with WRONG_KEY', async () => {
    const file = await sealBackup(await filledExport(), PASS, FAST);
    await expect(openBackup(file, 'correct horse battery!')).rejects.toMatchObject({ code: 'WRONG_KEY' });
  });

  it('refuses a flipped bit or a cut file with STORE_CORRUPT, and a non-backup with INVALID_INPUT', async () => {
    const file = await sealBackup(await filledExport(), PASS, FAST);
    const flipped = file.slice();
    flipped[file.length - 20]! ^= 0x01;
    await expect(openBackup(flipped, PASS)).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    await expect(openBackup(file.slice(0, file.length - 1), PASS)).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    await expect(openBackup(file.slice(0, 20), PASS)).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    await expect(openBackup(new TextEncoder().encode('[{"id":"a","text":"plain json"}]'), PASS)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('refuses a later format with SCHEMA_TOO_NEW', async () => {
    const file = await sealBackup([], PASS, FAST);
    const length = new DataView(file.buffer, 8, 4).getUint32(0, true);
    const header = JSON.parse(new TextDecoder().decode(file.subarray(12, 12 + length))) as { version: number };
    const later = new TextEncoder().encode(JSON.stringify({ ...header, version: 2 }));
    const bytes = new Uint8Array(12 + later.length + file.length - 12 - length);
    bytes.set(file.subarray(0, 8));
    new DataView(bytes.buffer).setUint32(8, later.length, true);
    bytes.set(later, 12);
    bytes.set(file.subarray(12 + length), 12 + later.length);
    await expect(openBackup(bytes, PASS)).rejects.toMatchObject({ code: 'SCHEMA_TOO_NEW' });
  });

  it('takes a new passphrase of 8 characters or more only, and sane iterations', async () => {
    await expect(sealBackup([], 'short', FAST)).rejects.toMatchObject({ code: 'WEAK_PASSPHRASE' });
    await expect(sealBackup([], PASS, { iterations: 10 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(sealBackup({} as never, PASS, FAST)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
