/** A local S3-compatible server (s3rver) on a random port with a temp directory, its bucket's CORS set as a browser app needs. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';
import { afterAll, beforeAll } from 'vitest';
import type { Engine } from '../../../src/engine/engine.js';
import { s3Transport, type S3TransportConfig } from '../../../src/sync/s3.js';
import type { SyncTransport } from '../../../src/sync/transport.js';

/** What a browser app needs: its origin may GET, PUT, DELETE and list with signed headers. */
export const BROWSER_CORS = `<CORSConfiguration>
  <CORSRule>
    <AllowedOrigin>*</AllowedOrigin>
    <AllowedMethod>GET</AllowedMethod>
    <AllowedMethod>PUT</AllowedMethod>
    <AllowedMethod>DELETE</AllowedMethod>
    <AllowedMethod>HEAD</AllowedMethod>
    <AllowedHeader>*</AllowedHeader>
    <ExposeHeader>ETag</ExposeHeader>
    <MaxAgeSeconds>3000</MaxAgeSeconds>
  </CORSRule>
</CORSConfiguration>`;

export interface LocalS3 {
  config: S3TransportConfig;
  directory: string;
  /** Every file the server stored (objects and their metadata). */
  files(): string[];
  close(): Promise<void>;
}

export async function startS3(bucket = 'memories'): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 'engram-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket, configs: [BROWSER_CORS] }] });
  const { port } = (await server.run()) as { port: number };
  const files = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : [join(dir, name)]));
  return {
    config: { kind: 's3', endpoint: `http://127.0.0.1:${port}`, bucket, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    directory,
    files: () => files(directory),
    async close() {
      // fetch keeps connections alive: without this, close waits for them to time out.
      (server as { httpServer: { closeAllConnections(): void } }).httpServer.closeAllConnections();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** Whether any stored file holds `text` (as UTF-8 bytes). */
export function bucketHolds(s3: LocalS3, text: string): string[] {
  const needle = Buffer.from(text, 'utf8');
  return s3.files().filter((file) => readFileSync(file).includes(needle));
}

/** One test file's local S3 server, its transport and a temp folder; the engines pushed to `engines` close after the file. */
export interface S3Suite {
  readonly s3: LocalS3;
  readonly transport: SyncTransport;
  readonly dir: string;
  readonly engines: Engine[];
}

export function s3Suite(label: string): S3Suite {
  let s3: LocalS3 | undefined;
  let transport: SyncTransport | undefined;
  let dir: string | undefined;
  const engines: Engine[] = [];
  beforeAll(async () => {
    s3 = await startS3();
    transport = s3Transport(s3.config);
    dir = mkdtempSync(join(tmpdir(), `engram-${label}-`));
  });
  afterAll(async () => {
    for (const engine of engines) await engine.close().catch(() => undefined);
    await s3?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    get s3() {
      return s3!;
    },
    get transport() {
      return transport!;
    },
    get dir() {
      return dir!;
    },
    engines,
  };
}
