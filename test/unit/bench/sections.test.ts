/**
 * Every Node section of `npm run bench`, run small: it must complete with every system measured, and its answers
 * must be right (recall against the exact scan, memories just added found by their own text). Times are not checked.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { wordList } from './word-list.js';
import { readBeamChat } from '../../../bench/perf/beam-chat.js';
import { BENCH_NOW, World } from '../../../bench/perf/data.js';
import { PrecomputedEmbedder } from '../../../bench/perf/engram.js';
import { benchLong, chatCorpus, type LongCorpus } from '../../../bench/perf/long.js';
import type { LoopOptions, SectionResult } from '../../../bench/perf/measure.js';
import { benchIvf, IVF_KINDS, IVF_SYSTEMS } from '../../../bench/perf/ivf.js';
import { loadBuiltInModel } from '../../../bench/perf/model.js';
import { repoRoot } from '../../../bench/perf/paths.js';
import { benchQueries } from '../../../bench/perf/node-data.js';
import { ADD_PROBE, benchSize } from '../../../bench/perf/suite.js';
import { ADD_COUNT, benchWrites, TURNS, WRITES_OPS } from '../../../bench/perf/writes.js';
import { createEngine } from '../../../src/index.js';


const N = 300;
const loop: LoopOptions = { rounds: 1, budgetMs: 50 };
const world = new World(wordList());
const queries = benchQueries(world);
const corpus = world.corpus(N + TURNS + ADD_COUNT);
const empty = (): SectionResult => ({ latency: [], figures: [], stages: [], notes: [], env: {} });
const value = (out: SectionResult, system: string, metric: string) => out.figures.find((f) => f.system === system && f.metric === metric)?.value;
const ops = (out: SectionResult, system: string) => new Set(out.latency.filter((r) => r.system === system).map((r) => r.op));

describe('bench sections, run small', () => {
  it('node: every system on both query sets, Engram exact against the naive scan', async () => {
    const out = empty();
    const embedder = new PrecomputedEmbedder('bench-384d', corpus.dim).addCorpus(corpus).addQueries(queries);
    await benchSize(out, { section: 'node', corpus, n: N, queries, loop, heapBytes: async () => null, log: () => {}, engram: [{ system: 'Engram', open: () => createEngine({ embedder, clock: () => BENCH_NOW }) }] });
    expect(out.notes).toEqual([]);
    expect(ops(out, 'Engram')).toEqual(new Set(['hybrid', 'lexical leg', 'vector leg']));
    for (const [system, op] of [['MiniSearch', 'lexical'], ['Orama hybrid', 'hybrid'], ['naive (full sort)', 'vector top-10']]) expect(ops(out, system!)).toEqual(new Set([op]));
    expect(new Set(out.latency.map((r) => r.set))).toEqual(new Set(['standard', 'worst-case']));
    expect(value(out, 'Engram', 'vector recall@10')).toBe(1);
    expect(value(out, 'Engram', 'vector recall@10 (worst-case set)')).toBe(1);
    expect(value(out, 'Engram', 'add memories/s at N (batches of 50)')).toBeGreaterThan(0);
    expect(out.stages.map((s) => s.stage)).toContain('lexical');
  });

  it('writes: turns and add at N for Engram, MiniSearch and Orama; what was just added is found first', async () => {
    const out = empty();
    await benchWrites(out, corpus, queries, N, loop);
    expect(out.notes).toEqual([]);
    for (const system of ['Engram', 'MiniSearch', 'Orama hybrid']) {
      expect(ops(out, system)).toContain(WRITES_OPS.add);
      expect(ops(out, system)).toContain(WRITES_OPS.turn);
      expect(value(out, system, 'turns measured')).toBeGreaterThanOrEqual(3);
      expect(value(out, system, 'add memories/s at N (batches of 50)')).toBeGreaterThan(0);
    }
    // Below the IVF's size no lists build after the import, so there are no searches while they do.
    expect(ops(out, 'Engram')).toEqual(new Set(Object.values(WRITES_OPS).filter((op) => op !== WRITES_OPS.building)));
    expect(value(out, 'Engram', 'vector lists built after the import, ms')).toBeGreaterThanOrEqual(0);
    expect(value(out, 'Engram', 'memories just added found first by their own text')).toBe(1);
    expect(new Set(out.stages.map((s) => s.system))).toEqual(new Set(['Engram, steady', 'Engram, right after adding one']));
  });

  it('ivf: each system on uniform and clustered vectors; the exact scan is the reference; wherever the lists answer, recall@10 ≥ 0.98', async () => {
    const rows = await benchIvf({ sizes: [12_000], dim: 48, queries: 40, rounds: 1, clusters: 100, ivf: { ivfMinRows: 5_000 } });
    expect(rows.map((r) => `${r.kind} ${r.system}`)).toEqual(IVF_KINDS.flatMap((kind) => Object.values(IVF_SYSTEMS).map((system) => `${kind} ${system}`)));
    for (const row of rows) {
      if (row.system === IVF_SYSTEMS.exact) expect(row.recall).toBe(1);
      if (row.system !== IVF_SYSTEMS.ivf && row.system !== IVF_SYSTEMS.compact) continue;
      expect(row.status?.building).toBe(false);
      expect(row.recall, `${row.kind} ${row.system}`).toBeGreaterThanOrEqual(row.status?.answering === 'lists' ? 0.98 : 1);
    }
    expect(rows.find((r) => r.kind === 'clustered' && r.system === IVF_SYSTEMS.compact)?.status?.answering).toBe('lists');
  }, 120_000);

  it('sync: a new device receives every memory from the log and from a snapshot (bench/sync.ts at 60 memories)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/sync.ts', '--count', '60'], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
    // The script itself throws when a device receives fewer memories than were written.
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    const report = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { memories: number; logBytesPerMemory: number; snapshotBytesPerMemory: number };
    expect(report.memories).toBe(60);
    expect(report.logBytesPerMemory).toBeGreaterThan(0);
    expect(report.snapshotBytesPerMemory).toBeGreaterThan(0);
  }, 150_000);

  describe('long memories', () => {
    const root = mkdtempSync(join(tmpdir(), 'engram-beam-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    /** Two conversations of BEAM's shape: sessions of exchanges, a date on the first user message of some. */
    const write = (name: string, sessions: { date?: string; messages: string[] }[]) => {
      mkdirSync(join(root, name));
      const chat = sessions.map((s, b) => ({
        batch_number: b + 1,
        time_anchor: null,
        turns: [s.messages.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', id: b * 100 + i, content, index: `${b + 1},${i}`, ...(i === 0 && s.date ? { time_anchor: s.date } : {}) }))],
      }));
      writeFileSync(join(root, name, 'chat.json'), JSON.stringify(chat));
      writeFileSync(join(root, name, 'probing_questions.json'), JSON.stringify({ information_extraction: [{ question: `what about ${name}?` }] }));
    };
    const long = (i: number) => `message ${i} about ${world.render(world.wordsFor([i % 7], 400, () => ((i * 7919) % 1000) / 1000), () => 0.5)}`;
    write('1', [{ date: 'March-15-2024', messages: ['first question ->-> 1,1', 'an answer', 'x'.repeat(50)] }, { messages: ['later, no date', 'reply'] }]);
    write('2', [{ date: 'April-2-2024', messages: Array.from({ length: 400 }, (_, i) => long(i)) }]);

    it('reads BEAM chats in folder order, markers stripped, dated by session, long messages cut', () => {
      const chat = readBeamChat(root, 3, 40);
      expect(chat.conversations).toEqual(['1']);
      expect(chat.messages.map((m) => m.text)).toEqual(['first question', 'an answer', 'x'.repeat(40), 'later, no date', 'reply']);
      expect(chat.messages[0]!.createdAt).toBe(Date.UTC(2024, 2, 15));
      expect(chat.messages[1]!.createdAt).toBe(Date.UTC(2024, 2, 15) + 60_000);
      expect(chat.messages[3]!.createdAt).toBe(Date.UTC(2024, 2, 16));
      expect(chat.messages[3]!.thread).toBe('1/2');
      expect(chat.questions).toEqual(['what about 1?']);
      const both = readBeamChat(root, 100);
      expect(both.conversations).toEqual(['1', '2']);
      expect(both.messages.at(-1)!.createdAt).toBeGreaterThan(Date.UTC(2024, 3, 2));
    });

    it('a chat through the suite with the built-in model: every system measured, the vector leg exact', async () => {
      const model = await loadBuiltInModel();
      if ('reason' in model) throw new Error(model.reason);
      const source: LongCorpus = chatCorpus(root, 150)!;
      expect(source.items).toHaveLength(150 + ADD_PROBE);
      const out = await benchLong(source, model, loop, 5);
      expect(out.notes).toEqual([source.label]);
      expect(ops(out, 'Engram')).toEqual(new Set(['hybrid', 'lexical leg', 'vector leg']));
      expect(ops(out, 'MiniSearch')).toEqual(new Set(['lexical']));
      expect(ops(out, 'Orama hybrid')).toEqual(new Set(['hybrid']));
      expect(value(out, 'Engram', 'vector recall@10')).toBe(1);
      expect(out.latency.every((r) => r.n === 150 && r.dim === model.embedder.dim)).toBe(true);
    });
  });
});
