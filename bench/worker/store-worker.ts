/// <reference lib="webworker" />
/**
 * Store-level measurements in a dedicated worker (where OPFS sync handles exist): the three wa-sqlite VFSs and
 * plain IndexedDB on the same writes and reads, seeding a large database with real embeddings, the parts of a cold
 * open, and encryption at rest (page-level, and the per-record WebCrypto design it was chosen over).
 * Driven by bench/worker/page.ts.
 */
import * as Comlink from 'comlink';
import { openDB } from 'idb';
import { createEmbedder } from '../../src/embedder/index.js';
import { createEngine } from '../../src/engine/engine.js';
import { decodeSnapshot } from '../../src/lexical/snapshot.js';
import { newId } from '../../src/util/ids.js';
import type { Embedder, MemoryRecord } from '../../src/types.js';
import type { StoreWrite } from '../../src/store/store.js';
import type { EncryptionOptions } from '../../src/contract/protocol.js';
import { PBKDF2_ITERATIONS } from '../../src/util/passphrase.js';
import type { SqliteBackend } from '../../src/store/browser/wa-sqlite.js';
import { openSqliteStore } from '../../src/store/browser/browser-store.js';
import { readSnapshot, saveSnapshot } from '../../worker/index-saver.js';

export type Backend = SqliteBackend | 'indexeddb';
const DIM = 100;

function record(i: number, text: string, createdAt: number): MemoryRecord {
  return { id: `m${i}`, text, createdAt, priority: 1, pinned: false, tags: [], accessCount: 0 };
}

/** Unit-length stand-ins: write and read costs do not depend on the values. */
/** Memories `start`…`start + count` of `texts` with their model vectors, as one store write; `ms`: the embedding time. */
async function embeddedBatch(embedder: Embedder, texts: string[], createdAt: number[], start: number, count: number): Promise<{ write: StoreWrite; ms: number }> {
  const slice = texts.slice(start, start + count);
  const t = performance.now();
  const vecs = await embedder.embed(slice);
  const ms = performance.now() - t;
  const data = new Float32Array(slice.length * embedder.dim);
  vecs.forEach((v, i) => data.set(v, i * embedder.dim));
  return {
    ms,
    write: {
      put: slice.map((text, j) => record(start + j, text, createdAt[start + j] ?? 0)),
      vectors: { vectorSpace: embedder.vectorSpace ?? embedder.id, dim: embedder.dim, ids: slice.map((_, j) => `m${start + j}`), data },
    },
  };
}

function vectors(from: number, count: number): Float32Array {
  const data = new Float32Array(count * DIM);
  for (let i = 0; i < data.length; i++) data[i] = Math.sin(from * DIM + i) / Math.sqrt(DIM / 2);
  return data;
}

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** The same three operations on each backend: batched ingest, single-memory commits, reopen and load all. */
interface Target {
  write(records: MemoryRecord[], data: Float32Array): Promise<void>;
  close(): Promise<void>;
  loadAll(): Promise<number>;
}

async function openTarget(backend: Backend, name: string): Promise<Target> {
  if (backend === 'indexeddb') {
    // The obvious peer: one object per memory, vectors as Float32Arrays, one transaction per batch.
    const db = await openDB(name, 1, {
      upgrade(db) {
        db.createObjectStore('memories', { keyPath: 'id' });
        db.createObjectStore('vectors');
      },
    });
    return {
      async write(records, data) {
        const tx = db.transaction(['memories', 'vectors'], 'readwrite', { durability: 'strict' });
        const memories = tx.objectStore('memories');
        const vectorStore = tx.objectStore('vectors');
        records.forEach((r, i) => {
          void memories.put(r);
          void vectorStore.put(data.slice(i * DIM, (i + 1) * DIM), r.id);
        });
        await tx.done;
      },
      async close() {
        db.close();
      },
      async loadAll() {
        const [records, vecs] = await Promise.all([db.getAll('memories'), db.getAll('vectors')]);
        return Math.min(records.length, vecs.length);
      },
    };
  }
  const store = await openSqliteStore({ name, backend });
  return {
    write: (records, data) => store.write({ put: records, vectors: { vectorSpace: 'bench', dim: DIM, ids: records.map((r) => r.id), data } }),
    close: () => store.close(),
    async loadAll() {
      const [records, vecs] = [await store.loadRecords(), await store.loadVectors('bench', DIM)];
      return Math.min(records.length, vecs.ids.length);
    },
  };
}

const api = {
  async backends(backend: Backend, texts: string[], batch: number) {
    const name = `bench-vfs-${backend}-${Date.now()}`;
    let t = performance.now();
    let target = await openTarget(backend, name);
    const openMs = performance.now() - t;
    t = performance.now();
    for (let s = 0; s < texts.length; s += batch) {
      const end = Math.min(texts.length, s + batch);
      await target.write(texts.slice(s, end).map((text, j) => record(s + j, text, 1.7e12 + s + j)), vectors(s, end - s));
    }
    const ingestPerSec = texts.length / ((performance.now() - t) / 1000);
    const singles: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t1 = performance.now();
      await target.write([record(texts.length + i, `single ${i}`, 1.8e12)], vectors(i, 1));
      singles.push(performance.now() - t1);
    }
    await target.close();
    t = performance.now();
    target = await openTarget(backend, name);
    const reopenMs = performance.now() - t;
    t = performance.now();
    const loaded = await target.loadAll();
    const loadMs = performance.now() - t;
    await target.close();
    return { openMs, ingestPerSec, singleCommitMs: median(singles), reopenMs, loadMs, loaded };
  },

  /**
   * How one write's cost grows with the table: `batches` writes of `batch` memories (100-d vectors) into a new
   * database through the store, ms per write. Ids are UUIDs as `add` makes them (v7, time-ordered) or random v4
   * ones, as an app might bring its own.
   */
  async writeGrowth(texts: string[], batches: number, batch: number, ids: 'uuid7' | 'random') {
    const name = `bench-growth-${ids}-${Date.now()}`;
    const store = await openSqliteStore({ name, backend: 'opfs' });
    const ms: number[] = [];
    for (let b = 0; b < batches; b++) {
      const from = b * batch;
      const records = Array.from({ length: batch }, (_, j) => {
        const r = record(from + j, texts[(from + j) % texts.length] ?? 'x', 1.7e12 + from + j);
        r.id = ids === 'random' ? crypto.randomUUID() : newId();
        return r;
      });
      const t = performance.now();
      await store.write({ put: records, vectors: { vectorSpace: 'bench', dim: DIM, ids: records.map((r) => r.id), data: vectors(from, batch) } });
      ms.push(performance.now() - t);
    }
    const { bytes } = await store.sizeOnDisk();
    await store.close();
    return { ms, bytesPerMemory: bytes / (batches * batch) };
  },

  /** The key the engine files the built-in model's vectors under (its id without the device). */
  async vectorSpace(): Promise<string> {
    const embedder = await createEmbedder();
    await embedder.dispose();
    return embedder.vectorSpace ?? embedder.id;
  },

  /** Fills `name` with real built-in-model vectors, bypassing the engine (for the large cold-open database). */
  async seed(name: string, texts: string[], createdAt: number[], batch: number) {
    const embedder = await createEmbedder();
    const store = await openSqliteStore({ name, backend: 'opfs' });
    const existing = await store.count();
    let embedMs = 0;
    let writeMs = 0;
    for (let s = existing; s < texts.length; s += batch) {
      const { write, ms } = await embeddedBatch(embedder, texts, createdAt, s, batch);
      embedMs += ms;
      const t = performance.now();
      await store.write(write);
      writeMs += performance.now() - t;
    }
    await store.close();
    await embedder.dispose();
    const seeded = texts.length - existing;
    return { embedder: embedder.id, seeded, embedPerSec: seeded / (embedMs / 1000), writePerSec: seeded / (writeMs / 1000) };
  },

  /**
   * The parts of a cold open, one after the other. The worker's own open is "read index snapshot" + "engine open
   * from the snapshot" (which loads the records itself, then restores and checks the lexical index).
   */
  async breakdown(name: string, vectorSpace: string, query: string) {
    const parts: Record<string, number> = {};
    let t = performance.now();
    const store = await openSqliteStore({ name, backend: 'opfs' });
    parts['open SQLite'] = performance.now() - t;
    t = performance.now();
    const records = await store.loadRecords();
    parts['load records'] = performance.now() - t;
    t = performance.now();
    const vectors = await store.loadVectors(vectorSpace, DIM);
    if (vectors.ids.length !== records.length) throw new Error(`bench: ${vectors.ids.length} vectors for ${records.length} memories`);
    parts['load vectors'] = performance.now() - t;
    t = performance.now();
    const rebuilt = await createEngine({ store, embedder: null, indexSnapshot: null });
    parts['engine open, rebuilding the lexical index (loads records again)'] = performance.now() - t;
    t = performance.now();
    await rebuilt.search(query, { touch: false });
    parts['first lexical search'] = performance.now() - t;
    t = performance.now();
    const snapshotBytes = await saveSnapshot(rebuilt, store);
    parts['save the index snapshot (encode + write)'] = performance.now() - t;
    t = performance.now();
    const snapshot = await readSnapshot(store);
    if (!snapshot) throw new Error('bench: no snapshot saved');
    parts['read index snapshot'] = performance.now() - t;
    t = performance.now();
    decodeSnapshot(snapshot);
    parts['decode the snapshot (alone)'] = performance.now() - t;
    t = performance.now();
    const restored = await createEngine({ store, embedder: null, indexSnapshot: snapshot });
    parts[`engine open from the snapshot (${restored.lexicalSource}: load records, restore, check)`] = performance.now() - t;
    t = performance.now();
    await restored.search(query, { touch: false });
    parts['first lexical search, restored index'] = performance.now() - t;
    const { freeBytes } = await store.sizeOnDisk();
    await store.close();
    return { n: records.length, parts, snapshotBytes, freeBytes };
  },

  /**
   * Seeds several databases (one per `targets` entry: plain, or encrypted) with the same records and the same real
   * vectors: each batch is embedded once, then written to every target in turn (the order rotates, so none is
   * always first). Store writes only: what encryption changes in ingest. Each target's build of SQLite (plain, or
   * SQLite3 Multiple Ciphers) first writes one batch into a throwaway database, so no target pays for WebAssembly
   * tier-up that the others then share.
   */
  async seedVariants(targets: { name: string; encryption: EncryptionOptions | null }[], texts: string[], createdAt: number[], batch: number) {
    const embedder = await createEmbedder();
    const vectorSpace = embedder.vectorSpace ?? embedder.id;
    const warmTexts = texts.slice(0, Math.min(batch, texts.length));
    const warmVectors = await embedder.embed(warmTexts);
    const warmData = new Float32Array(warmTexts.length * embedder.dim);
    warmVectors.forEach((v, i) => warmData.set(v, i * embedder.dim));
    for (const target of targets) {
      const warm = await openSqliteStore({ name: `${target.name}-warmup`, backend: 'opfs', encryption: target.encryption });
      await warm.write({
        put: warmTexts.map((text, j) => record(j, text, createdAt[j] ?? 0)),
        vectors: { vectorSpace, dim: embedder.dim, ids: warmTexts.map((_, j) => `m${j}`), data: warmData },
      });
      await warm.close();
    }
    const opened: { store: Awaited<ReturnType<typeof openSqliteStore>>; openMs: number; writeMs: number }[] = [];
    for (const target of targets) {
      const t = performance.now();
      const store = await openSqliteStore({ name: target.name, backend: 'opfs', encryption: target.encryption });
      if (store.encrypted !== (target.encryption !== null)) throw new Error(`bench: ${target.name} encrypted=${store.encrypted}`);
      if ((await store.count()) !== 0) throw new Error(`bench: ${target.name} is not new`);
      opened.push({ store, openMs: performance.now() - t, writeMs: 0 });
    }
    let embedMs = 0;
    for (let s = 0, b = 0; s < texts.length; s += batch, b++) {
      const { write, ms } = await embeddedBatch(embedder, texts, createdAt, s, batch);
      embedMs += ms;
      for (let k = 0; k < opened.length; k++) {
        const target = opened[(b + k) % opened.length]!;
        const t = performance.now();
        await target.store.write(write);
        target.writeMs += performance.now() - t;
      }
    }
    const written = [];
    for (const [i, target] of opened.entries()) {
      const count = await target.store.count();
      const { bytes } = await target.store.sizeOnDisk();
      await target.store.close();
      if (count !== texts.length) throw new Error(`bench: ${targets[i]!.name} holds ${count} of ${texts.length}`);
      written.push({ name: targets[i]!.name, openMs: target.openMs, writePerSec: texts.length / (target.writeMs / 1000), bytesPerMemory: bytes / count });
    }
    await embedder.dispose();
    return { embedder: embedder.id, vectorSpace, dim: embedder.dim, embedPerSec: texts.length / (embedMs / 1000), targets: written };
  },

  /**
   * A store-level cold read of `name`: open (with `encryption`, which for a passphrase includes the key derivation),
   * then every record and every vector. Page decryption shows in the two loads.
   */
  async loadParts(name: string, encryption: EncryptionOptions | null, vectorSpace: string, dim: number) {
    let t = performance.now();
    const store = await openSqliteStore({ name, backend: 'opfs', encryption });
    const openMs = performance.now() - t;
    t = performance.now();
    const records = await store.loadRecords();
    const recordsMs = performance.now() - t;
    t = performance.now();
    const vecs = await store.loadVectors(vectorSpace, dim);
    const vectorsMs = performance.now() - t;
    await store.close();
    if (vecs.ids.length !== records.length) throw new Error(`bench: ${vecs.ids.length} vectors for ${records.length} memories`);
    return { openMs, recordsMs, vectorsMs, n: records.length };
  },

  /** PBKDF2-SHA-256 at the keyring's iteration count, to an AES-256-GCM key as the keyring derives it: ms per run. */
  async pbkdf2(runs: number) {
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) {
      const salt = crypto.getRandomValues(new Uint8Array(16));
      const t = performance.now();
      const material = await crypto.subtle.importKey('raw', new TextEncoder().encode(`bench passphrase ${i}`), 'PBKDF2', false, ['deriveKey']);
      await crypto.subtle.deriveKey({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations: PBKDF2_ITERATIONS }, material, { name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
      ms.push(performance.now() - t);
    }
    return { iterations: PBKDF2_ITERATIONS, ms, medianMs: median(ms) };
  },

  /**
   * The design not taken: per-record AES-256-GCM through WebCrypto, one call per record and column (text, vector),
   * a fresh 12-byte IV each, the record id and column as additional data. Encrypts every record's text and a
   * `dim`-d Float32 vector (as an ingest would), then decrypts them all (as a cold open would). Calls run
   * concurrently a batch at a time (`batch` records), the fastest way a real implementation would issue them.
   * Every plaintext is checked after decryption, outside the timings.
   */
  async perRecordWebCrypto(texts: string[], dim: number, batch: number) {
    const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
    const encoder = new TextEncoder();
    const decoder = new TextDecoder();
    const aad = (i: number, column: 'text' | 'vector') => encoder.encode(`m${i}:${column}`);
    // Stand-in values (the cost of AES-GCM does not depend on them), the same for encryption and the check.
    const vectorOf = (i: number) => {
      const v = new Float32Array(dim);
      for (let d = 0; d < dim; d++) v[d] = Math.sin(i * dim + d) / Math.sqrt(dim / 2);
      return v;
    };
    type Sealed = { iv: Uint8Array<ArrayBuffer>; data: ArrayBuffer };
    const sealedTexts: Sealed[] = new Array(texts.length);
    const sealedVectors: Sealed[] = new Array(texts.length);
    let encryptMs = 0;
    for (let s = 0; s < texts.length; s += batch) {
      const end = Math.min(texts.length, s + batch);
      const plainVectors = Array.from({ length: end - s }, (_, j) => vectorOf(s + j));
      const t = performance.now();
      const work: Promise<void>[] = [];
      for (let i = s; i < end; i++) {
        const seal = async (column: 'text' | 'vector', bytes: Uint8Array<ArrayBuffer>, into: Sealed[]) => {
          const iv = crypto.getRandomValues(new Uint8Array(12));
          into[i] = { iv, data: await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: aad(i, column) }, key, bytes) };
        };
        work.push(seal('text', encoder.encode(texts[i]!), sealedTexts));
        const vector = plainVectors[i - s]!;
        work.push(seal('vector', new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength), sealedVectors));
      }
      await Promise.all(work);
      encryptMs += performance.now() - t;
    }
    let decryptMs = 0;
    let checked = 0;
    for (let s = 0; s < texts.length; s += batch) {
      const end = Math.min(texts.length, s + batch);
      const t = performance.now();
      const opened = await Promise.all(
        Array.from({ length: end - s }, async (_, j) => {
          const i = s + j;
          const open = (column: 'text' | 'vector', sealed: Sealed) => crypto.subtle.decrypt({ name: 'AES-GCM', iv: sealed.iv, additionalData: aad(i, column) }, key, sealed.data);
          const [text, vector] = await Promise.all([open('text', sealedTexts[i]!), open('vector', sealedVectors[i]!)]);
          return { text: decoder.decode(text), vector: new Float32Array(vector) };
        }),
      );
      decryptMs += performance.now() - t;
      opened.forEach(({ text, vector }, j) => {
        const expected = vectorOf(s + j);
        if (text !== texts[s + j] || vector.length !== dim || vector.some((x, d) => x !== expected[d])) throw new Error(`bench: record m${s + j} did not decrypt to itself`);
        checked++;
      });
    }
    const per1k = (ms: number) => ms / (texts.length / 1000);
    return { n: texts.length, dim, calls: 2 * texts.length, checked, encryptMs, decryptMs, encryptMsPer1k: per1k(encryptMs), decryptMsPer1k: per1k(decryptMs) };
  },
};

export type StoreBench = typeof api;
Comlink.expose(api);
