/**
 * What the campaigns run inside the lab page. Operations travel as plain descriptors; hostile values that JSON
 * cannot carry (lone surrogates survive, but BigInt, Map, Date, NaN, deep nesting do not) are built in the page
 * from their name, so the worker receives them exactly as an app would send them.
 */
import type { Page } from 'playwright-core';

export type Op =
  | { op: 'add'; items: { id?: string; text: string; tags: string[]; project?: string }[] }
  | { op: 'add-hostile'; kind: HostileKind; token: string }
  | { op: 'update'; id: string; text: string }
  | { op: 'update-hostile'; id: string; kind: HostileKind; token: string }
  | { op: 'remove'; ids: string[] }
  | { op: 'pin'; id: string; pinned: boolean }
  | { op: 'import'; items: { id: string; text: string; tags: string[] }[] }
  | { op: 'search'; query: string; options: Record<string, unknown> | 'hostile' }
  | { op: 'count' }
  | { op: 'get'; id: string }
  | { op: 'export' }
  | { op: 'reopen' };

export const HOSTILE_KINDS = [
  'text-lone-surrogate',
  'id-lone-surrogate-1',
  'id-lone-surrogate-2',
  'id-replacement',
  'text-empty',
  'text-huge',
  'date-1e16',
  'date-words',
  'date-feb30',
  'date-nan',
  'tags-many',
  'tag-huge',
  'tag-lone-surrogate',
  'project-huge',
  'meta-deep',
  'meta-nan',
  'meta-bigint',
  'meta-map',
  'meta-date',
  'meta-huge',
  'meta-key-lone-surrogate',
  'not-an-object',
  'tags-not-array',
] as const;
export type HostileKind = (typeof HOSTILE_KINDS)[number];

export type Outcome = { ok: true; value: unknown } | { ok: false; code: string | null; message: string; timedOut?: boolean };

/** Runs one operation on `window.memories[key]` (reopening it for 'reopen'), with a timeout that counts as a hang. */
export function runOp(page: Page, key: string, name: string, op: Op, timeoutMs: number): Promise<Outcome> {
  return page.evaluate(
    async ([key, name, op, timeoutMs]) => {
      const { createMemory, isEngramError } = window.engram;
      const hostileInput = (kind: string, token: string): unknown => {
        const text = `hostile ${kind} ${token}`;
        const deep = () => {
          let meta: Record<string, unknown> = {};
          const root = meta;
          for (let i = 0; i < 1500; i++) meta = (meta.child = {}) as Record<string, unknown>;
          return root;
        };
        switch (kind) {
          case 'text-lone-surrogate': return { text: `${text} \ud800 end` };
          case 'id-lone-surrogate-1': return { id: '\ud800', text };
          case 'id-lone-surrogate-2': return { id: '\ud801', text };
          case 'id-replacement': return { id: '\ufffd\ufffd\ufffd', text };
          case 'text-empty': return { text: '' };
          case 'text-huge': return { text: 'x'.repeat(1_000_001) };
          case 'date-1e16': return { text, createdAt: 1e16 };
          case 'date-words': return { text, createdAt: 'version 3' };
          case 'date-feb30': return { text, createdAt: '2024-02-30' };
          case 'date-nan': return { text, createdAt: Number.NaN };
          case 'tags-many': return { text, tags: Array.from({ length: 20_000 }, (_, i) => `t${i}`) };
          case 'tag-huge': return { text, tags: ['t'.repeat(100_000)] };
          case 'tag-lone-surrogate': return { text, tags: ['ok', '\udc00'] };
          case 'project-huge': return { text, project: 'p'.repeat(100_000) };
          case 'meta-deep': return { text, meta: deep() };
          case 'meta-nan': return { text, meta: { value: Number.NaN } };
          case 'meta-bigint': return { text, meta: { value: 10n } };
          case 'meta-map': return { text, meta: { value: new Map([[1, 2]]) } };
          case 'meta-date': return { text, meta: { when: new Date() } };
          case 'meta-huge': return { text, meta: { blob: 'm'.repeat(2_000_000) } };
          case 'meta-key-lone-surrogate': return { text, meta: { ['\ud800key']: 1 } };
          case 'not-an-object': return 42;
          case 'tags-not-array': return { text, tags: 'garden' };
          default: throw new Error(`unknown hostile kind ${kind}`);
        }
      };
      const hostileSearch = (): Record<string, unknown> =>
        [{ k: 2 ** 31 }, { k: -1 }, { k: Number.NaN }, { candidatePool: 1e9 }, { fusion: 'nope' }, { decay: 42 }, { filter: 'x' }, { weights: { lexical: -1 } }][
          Math.floor(Math.random() * 8)
        ]!;
      const run = async (): Promise<unknown> => {
        const memory = () => {
          const open = window.memories[key];
          if (!open) throw new Error(`memory ${key} is not open`);
          return open;
        };
        switch (op.op) {
          case 'add': return memory().add(op.items);
          case 'add-hostile': return memory().add(hostileInput(op.kind, op.token) as never);
          case 'update': return memory().update(op.id, { text: op.text });
          case 'update-hostile': {
            const { id: _id, ...patch } = hostileInput(op.kind, op.token) as Record<string, unknown>;
            return memory().update(op.id, patch as never);
          }
          case 'remove': return memory().remove(op.ids);
          case 'pin': return memory().pin(op.id, op.pinned);
          case 'import': return memory().import(op.items);
          case 'search': {
            const result = await memory().search(op.query, (op.options === 'hostile' ? hostileSearch() : op.options) as never);
            return result.hits.map((hit) => hit.id);
          }
          case 'count': return memory().count();
          case 'get': return memory().get(op.id);
          case 'export': return (await memory().export()).map((record) => ({ id: record.id, text: record.text, pinned: record.pinned }));
          case 'reopen': {
            await window.memories[key]?.close();
            delete window.memories[key];
            // Short write timeouts: a hostile write the worker never answers ends in TIMEOUT (a coded refusal) fast.
            window.memories[key] = await createMemory({ name, embedder: null, writeTimeoutMs: 10_000, callTimeoutMs: 10_000 });
            return null;
          }
        }
      };
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error(`no answer in ${timeoutMs} ms`), { timedOut: true })), timeoutMs);
      });
      try {
        return { ok: true as const, value: await Promise.race([run(), timeout]) };
      } catch (error) {
        const timedOut = (error as { timedOut?: boolean }).timedOut === true;
        return {
          ok: false as const,
          code: isEngramError(error) ? error.code : null,
          message: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 300) : String(error),
          ...(timedOut ? { timedOut } : {}),
        };
      } finally {
        clearTimeout(timer);
      }
    },
    [key, name, op, timeoutMs] as const,
  );
}
