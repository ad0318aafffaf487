/**
 * The S3 transport (AWS S3, Cloudflare R2, MinIO, Backblaze B2): plain fetch, requests signed by aws4fetch
 * (SigV4), path-style URLs so any endpoint works. Its config is plain data, so it can cross to a worker.
 */
import { AwsClient } from 'aws4fetch';
import { EngramError, ErrorCode, invalidInput } from '../errors.js';
import type { SyncTransport } from './transport.js';

export interface S3TransportConfig {
  kind: 's3';
  /** e.g. `https://s3.eu-west-1.amazonaws.com`, `https://<account>.r2.cloudflarestorage.com`, `http://localhost:9000`. */
  endpoint: string;
  bucket: string;
  /** Default `auto` (R2); S3 needs the bucket's region. */
  region?: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** A listing page is a few hundred KiB at most (1,000 keys). */
const LIST_BYTES = 16 * 1024 * 1024;

/**
 * A response's body, read as it streams: refused once it passes `maxBytes` (a Content-Length over it is refused
 * before reading), and, `exact`, refused when it ends short of its Content-Length (a cut connection), both SYNC_FAILED.
 */
async function body(what: string, response: Response, maxBytes: number, exact: boolean, progress?: () => void): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  const tooLarge = () => new EngramError(ErrorCode.SYNC_FAILED, `sync storage answered ${what} with more than ${maxBytes} bytes: refused unread`, { details: { tooLarge: true } });
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    const reader = response.body?.getReader();
    for (;;) {
      const next = reader ? await reader.read() : { done: true as const, value: undefined };
      if (next.done) break;
      length += next.value.length;
      if (length > maxBytes) {
        await reader!.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(next.value);
      progress?.();
    }
  } catch (error) {
    if (error instanceof EngramError) throw error;
    throw new EngramError(ErrorCode.SYNC_FAILED, `sync storage cut ${what} short: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  // Content-Length counts the encoded bytes: only an unencoded body can be held to it (a browser may hide the encoding, so listings, which a CDN may compress, are not).
  const encoding = response.headers.get('content-encoding');
  if (exact && (encoding === null || encoding === 'identity') && Number.isFinite(declared) && length !== declared) {
    throw new EngramError(ErrorCode.SYNC_FAILED, `sync storage cut ${what} short: ${length} of ${declared} bytes`);
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

function xmlText(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}

/**
 * A sync transport on an S3-compatible bucket (set its CORS for a browser app: docs/sync.md).
 *
 * @example
 * ```ts
 * const transport = s3Transport({ kind: 's3', endpoint: 'https://<account>.r2.cloudflarestorage.com', bucket: 'memories', accessKeyId, secretAccessKey });
 * const engine = await createEngine({ sync: { transport, passphrase } });
 * ```
 */
export function s3Transport(config: S3TransportConfig): SyncTransport {
  for (const field of ['endpoint', 'bucket', 'accessKeyId', 'secretAccessKey'] as const) {
    if (typeof config?.[field] !== 'string' || config[field] === '') throw invalidInput(`sync transport (s3): ${field} must be a non-empty string`);
  }
  const client = new AwsClient({
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
    ...(config.sessionToken ? { sessionToken: config.sessionToken } : {}),
    service: 's3',
    region: config.region ?? 'auto',
    retries: 2,
  });
  const base = `${config.endpoint.replace(/\/+$/, '')}/${encodeURIComponent(config.bucket)}`;
  const url = (key: string) => `${base}/${key.split('/').map(encodeURIComponent).join('/')}`;
  const request = async (what: string, input: string, init?: RequestInit): Promise<Response> => {
    // Tried twice: a kept-alive connection the server closed meanwhile fails the first use (every request is idempotent).
    for (let attempt = 1; ; attempt++) {
      try {
        return await client.fetch(input, init);
      } catch (error) {
        if (attempt < 2 && !init?.signal?.aborted) continue;
        throw new EngramError(ErrorCode.SYNC_FAILED, `sync storage unreachable (${what}): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    }
  };
  const fail = async (what: string, response: Response) =>
    new EngramError(ErrorCode.SYNC_FAILED, `sync storage refused ${what}: HTTP ${response.status} ${(await response.text().catch(() => '')).slice(0, 200)}`, { details: { status: response.status } });

  return {
    async list(prefix, call) {
      const keys: string[] = [];
      let token: string | null = null;
      do {
        const query = new URLSearchParams({ 'list-type': '2', prefix });
        if (token) query.set('continuation-token', token);
        const response = await request('list', `${base}?${query}`, { signal: call?.signal ?? null });
        if (!response.ok) throw await fail(`list ${prefix}`, response);
        const xml = new TextDecoder().decode(await body(`list ${prefix}`, response, LIST_BYTES, false, call?.progress));
        for (const match of xml.matchAll(/<Key>([^<]*)<\/Key>/g)) keys.push(xmlText(match[1]!));
        const truncated = /<IsTruncated>true<\/IsTruncated>/.test(xml);
        token = truncated ? xmlText(/<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(xml)?.[1] ?? '') || null : null;
      } while (token);
      return keys;
    },
    async get(key, call) {
      const response = await request('get', url(key), { signal: call?.signal ?? null });
      if (response.status === 404) {
        await response.body?.cancel().catch(() => undefined);
        return null;
      }
      if (!response.ok) throw await fail(`get ${key}`, response);
      return body(`get ${key}`, response, call?.maxBytes ?? Infinity, true, call?.progress);
    },
    async put(key, bytes, call) {
      const headers: Record<string, string> = { 'content-type': 'application/octet-stream', ...(call?.ifAbsent ? { 'if-none-match': '*' } : {}) };
      const response = await request('put', url(key), { method: 'PUT', body: new Uint8Array(bytes), headers, signal: call?.signal ?? null });
      // 412: the name is taken (a conditional write); 409: a conditional write raced another one (S3).
      if (call?.ifAbsent && (response.status === 412 || response.status === 409)) {
        await response.body?.cancel().catch(() => undefined);
        throw new EngramError(ErrorCode.SYNC_FAILED, `sync storage refused put ${key}: the name is taken`, { details: { status: response.status, taken: true } });
      }
      if (!response.ok) throw await fail(`put ${key}`, response);
      await response.body?.cancel().catch(() => undefined);
    },
    async delete(key, call) {
      const response = await request('delete', url(key), { method: 'DELETE', signal: call?.signal ?? null });
      if (!response.ok && response.status !== 404) throw await fail(`delete ${key}`, response);
    },
  };
}
