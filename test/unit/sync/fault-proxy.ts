/**
 * A fault-injecting HTTP proxy in front of the local S3 server: requests pass through unchanged (headers too, so
 * SigV4 signatures still verify) unless `fault` picks one for them. Faults: an error status, a body cut after half
 * its bytes, a hang (no answer until the proxy closes); objects withheld (404, and left out of listings) or
 * only left out of listings (`hide`); and other bytes served for an object (`serve`).
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { S3TransportConfig } from '../../../src/sync/s3.js';

export type Fault = { kind: 'error'; status: number } | { kind: 'truncate' } | { kind: 'hang' };

/** One request as the proxy sees it: `key` is the object key (decoded), or for a listing its `prefix`. */
export interface ProxiedRequest {
  method: string;
  key: string;
  list: boolean;
}

export interface FaultProxy {
  /** The S3 config pointing at the proxy. */
  config: S3TransportConfig;
  /** Picks a fault for a request (null: pass it through). Replace it any time. */
  fault: (request: ProxiedRequest) => Fault | null;
  /** Keys left out of every listing. */
  hide: (key: string) => boolean;
  /** Objects withheld: 404 to a GET, and left out of every listing. */
  withhold: (key: string) => boolean;
  /** Other bytes to answer a GET of `key` with (null: the stored ones), as a storage showing readers different objects. */
  serve: (key: string) => Uint8Array | null;
  /** Every request seen, in order. */
  seen: ProxiedRequest[];
  close(): Promise<void>;
}

export async function startFaultProxy(target: S3TransportConfig): Promise<FaultProxy> {
  const upstream = new URL(target.endpoint);
  const bucketPath = `/${encodeURIComponent(target.bucket)}`;
  const sockets = new Set<Socket>();
  const proxy: FaultProxy = {
    config: target,
    fault: () => null,
    hide: () => false,
    withhold: () => false,
    serve: () => null,
    seen: [],
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, onResponse: (upstreamRes: IncomingMessage, data: Buffer) => void) => {
    // A connection per request (no keep-alive): a reused one the server closed would look like an injected fault.
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent: false }, (upstreamRes) => {
      const chunks: Buffer[] = [];
      upstreamRes.on('data', (chunk: Buffer) => chunks.push(chunk));
      upstreamRes.on('end', () => onResponse(upstreamRes, Buffer.concat(chunks)));
    });
    out.on('error', () => res.destroy());
    out.end(body);
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const list = url.pathname === bucketPath || url.pathname === `${bucketPath}/`;
    const key = list ? (url.searchParams.get('prefix') ?? '') : decodeURIComponent(url.pathname.slice(bucketPath.length + 1));
    const seen: ProxiedRequest = { method: req.method ?? 'GET', key, list };
    proxy.seen.push(seen);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const fault = proxy.fault(seen);
      if (fault?.kind === 'hang') return;
      if (fault?.kind === 'error') {
        res.writeHead(fault.status, { 'content-type': 'application/xml' });
        res.end('<Error><Code>InternalError</Code><Message>injected</Message></Error>');
        return;
      }
      if (!list && (req.method === 'GET' || req.method === 'HEAD') && proxy.withhold(key)) {
        res.writeHead(404, { 'content-type': 'application/xml' });
        res.end('<Error><Code>NoSuchKey</Code><Message>withheld</Message></Error>');
        return;
      }
      forward(req, res, Buffer.concat(chunks), (upstreamRes, data) => {
        const headers = { ...upstreamRes.headers };
        const other = !list && req.method === 'GET' && upstreamRes.statusCode === 200 ? proxy.serve(key) : null;
        if (other !== null) data = Buffer.from(other);
        if (list && upstreamRes.statusCode === 200) {
          const xml = data.toString('utf8').replace(/<Contents>[\s\S]*?<\/Contents>/g, (block) => {
            const name = /<Key>([^<]*)<\/Key>/.exec(block)?.[1] ?? '';
            return proxy.hide(name) || proxy.withhold(name) ? '' : block;
          });
          data = Buffer.from(xml, 'utf8');
        }
        headers['content-length'] = String(data.length);
        delete headers['transfer-encoding'];
        res.writeHead(upstreamRes.statusCode ?? 502, headers);
        if (fault?.kind === 'truncate' && data.length > 1) {
          // Half the body, then the connection drops: the client sees fewer bytes than Content-Length says.
          res.write(data.subarray(0, Math.floor(data.length / 2)), () => res.destroy());
          return;
        }
        res.end(data);
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  proxy.config = { ...target, endpoint: `http://127.0.0.1:${port}` };
  return proxy;
}
