import { afterAll, beforeAll, expect, test } from 'vitest';
import { ErrorCode } from '../../../src/errors.js';
import { s3Transport } from '../../../src/sync/s3.js';
import { startS3, type LocalS3 } from './s3-server.js';

let s3: LocalS3;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(() => s3.close());

test('the S3 transport puts, lists, gets and deletes objects on a local S3 server', async () => {
  const transport = s3Transport(s3.config);
  const bytes = new Uint8Array([0, 1, 2, 255, 254]);
  await transport.put('a/b c/1', bytes);
  expect(await transport.get('a/b c/1')).toEqual(bytes);
  expect(await transport.get('a/none')).toBeNull();
  for (let i = 0; i < 30; i++) await transport.put(`many/${String(i).padStart(4, '0')}`, new Uint8Array([i]));
  expect((await transport.list('many/')).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `many/${String(i).padStart(4, '0')}`));
  expect(await transport.list('a/')).toEqual(['a/b c/1']);
  await transport.delete!('a/b c/1');
  expect(await transport.get('a/b c/1')).toBeNull();
}, 60_000);

test('an unknown access key and an unreachable endpoint are SYNC_FAILED', async () => {
  const wrong = s3Transport({ ...s3.config, accessKeyId: 'nobody' });
  await expect(wrong.put('x', new Uint8Array([1]))).rejects.toMatchObject({ code: ErrorCode.SYNC_FAILED });
  const away = s3Transport({ ...s3.config, endpoint: 'http://127.0.0.1:9' });
  await expect(away.list('')).rejects.toMatchObject({ code: ErrorCode.SYNC_FAILED });
});

test('a download over maxBytes is refused unread; a conditional put is sent, and s3rver (no conditional writes) ignores it', async () => {
  const transport = s3Transport(s3.config);
  await transport.put('cap/big', new Uint8Array(4096));
  await expect(transport.get('cap/big', { maxBytes: 4095 })).rejects.toMatchObject({ code: ErrorCode.SYNC_FAILED, details: { tooLarge: true } });
  expect((await transport.get('cap/big', { maxBytes: 4096 }))?.length).toBe(4096);
  // Where sync cannot rely on the condition, it reads the name first (sync.ts claim).
  await transport.put('cap/big', new Uint8Array([7]), { ifAbsent: true });
  expect(await transport.get('cap/big')).toEqual(new Uint8Array([7]));
  const aborted = new AbortController();
  aborted.abort();
  await expect(transport.get('cap/big', { signal: aborted.signal })).rejects.toMatchObject({ code: ErrorCode.SYNC_FAILED });
});
