/**
 * The demo's sync bucket (demo/sync.html): s3rver, a local S3-compatible server, answering under the dev server's
 * own origin at `/<DEMO_BUCKET>/`, so the page fetches from nowhere but its origin (no CORS; the demo's CSP allows
 * only 'self'). Path-style S3 URLs start with the bucket's name, so a request reaches s3rver unchanged and its SigV4
 * signature (over host and path) verifies as signed. Started on the first request, in a temporary directory removed
 * when the server closes: the bucket lasts as long as `npm run demo` (or a test run's server).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Plugin } from 'vite';

export const DEMO_BUCKET = 'engram-demo-bucket';
/** s3rver's built-in account: the demo's bucket is local and holds only sealed objects. */
export const DEMO_BUCKET_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

interface Bucket {
  handle(req: IncomingMessage, res: ServerResponse): void;
  dispose(): void;
}

async function startBucket(): Promise<Bucket> {
  // @ts-expect-error s3rver ships no types
  const { default: S3rver } = (await import('s3rver')) as { default: new (options: object) => { configureBuckets(): Promise<void>; callback(): Bucket['handle'] } };
  const directory = mkdtempSync(join(tmpdir(), 'engram-demo-bucket-'));
  const server = new S3rver({ silent: true, directory, configureBuckets: [{ name: DEMO_BUCKET, configs: [] }] });
  await server.configureBuckets();
  return { handle: server.callback(), dispose: () => rmSync(directory, { recursive: true, force: true }) };
}

export function demoBucket(): Plugin {
  return {
    name: 'engram-demo-bucket',
    configureServer(server) {
      let bucket: Promise<Bucket> | null = null;
      server.httpServer?.once('close', () => void bucket?.then((opened) => opened.dispose(), () => undefined));
      // Before Vite's own middlewares: S3 keys have no file extension Vite should transform, but `sync-key.json` has.
      server.middlewares.use((req, res, next) => {
        const url = req.url ?? '';
        if (url !== `/${DEMO_BUCKET}` && !url.startsWith(`/${DEMO_BUCKET}/`) && !url.startsWith(`/${DEMO_BUCKET}?`)) return next();
        (bucket ??= startBucket()).then((opened) => opened.handle(req, res), next);
      });
    },
  };
}
