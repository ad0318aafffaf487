import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BeamAccumulator, beamMessageText, loadBeam, loadBeamOrSkip, MESSAGE_STEP_MS, parseBeamDate, readBeamChat, scoreBeamQuestion, type BeamQuestion } from '../../../bench/lib/beam.js';

// Two sessions in BEAM's shape: turns are lists of messages, the session's date sits on one user message.
const chat = [
  {
    batch_number: 1,
    time_anchor: null,
    turns: [
      [
        { role: 'user', id: 0, index: '1,1', time_anchor: 'March-15-2024', content: 'The demo is due on 1 April. ->-> 1,1' },
        { role: 'assistant', id: 1, content: 'Noted: 1 April.' },
      ],
      [
        { role: 'user', id: 2, index: '1,2', content: 'Actually the demo moved to 5 April ->-> 1,2, 3' },
        { role: 'assistant', id: 3, content: 'x'.repeat(50) },
      ],
    ],
  },
  {
    batch_number: 2,
    time_anchor: null,
    turns: [[{ role: 'user', id: 4, index: '2,1', time_anchor: 'April-02-2024', content: 'I use (and love ->-> 2,1) tabs.' }, { role: 'assistant', id: 5, content: 'Tabs it is.' }]],
  },
];
const probes = {
  knowledge_update: [{ question: 'When is the demo?', source_chat_ids: { original_info: [0], updated_info: [2] } }],
  event_ordering: [{ question: 'In what order did I mention things?', source_chat_ids: [[0, 2], 4, 99] }],
  abstention: [{ question: 'What is my cat called?', source_chat_ids: null }],
};

describe('BEAM reader', () => {
  it('reads session dates as midnight UTC and refuses other formats with a coded error', () => {
    expect(parseBeamDate('March-15-2024')).toBe(Date.UTC(2024, 2, 15));
    expect(parseBeamDate('november-5-2023')).toBe(Date.UTC(2023, 10, 5));
    expect(() => parseBeamDate('15 March 2024')).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringMatching(/BEAM session date/) }));
  });

  it('strips position markers anywhere and cuts to the limit without splitting a surrogate pair', () => {
    expect(beamMessageText('Hello ->-> 1,1', 100)).toBe('Hello');
    expect(beamMessageText('a (b ->-> 5,14) c ->-> 2,22, 24', 100)).toBe('a (b) c');
    expect(beamMessageText('abcdef', 4)).toBe('abcd');
    expect(beamMessageText('ab\u{1F600}cd', 3)).toBe('ab');
  });

  it('makes every message a memory dated by its session a minute apart, threaded by session, cut to the limit', () => {
    const read = readBeamChat('beam/1', chat, probes, 40);
    expect(read.memories.map((m) => m.id)).toEqual(['0', '1', '2', '3', '4', '5']);
    expect(read.memories.map((m) => m.createdAt)).toEqual([
      Date.UTC(2024, 2, 15),
      Date.UTC(2024, 2, 15) + MESSAGE_STEP_MS,
      Date.UTC(2024, 2, 15) + 2 * MESSAGE_STEP_MS,
      Date.UTC(2024, 2, 15) + 3 * MESSAGE_STEP_MS,
      Date.UTC(2024, 3, 2),
      Date.UTC(2024, 3, 2) + MESSAGE_STEP_MS,
    ]);
    expect(read.memories[2]).toEqual({ id: '2', text: 'Actually the demo moved to 5 April', createdAt: Date.UTC(2024, 2, 15) + 2 * MESSAGE_STEP_MS, kind: 'turn', meta: { role: 'user', thread: 'session_1' } });
    expect(read.memories[4]!.meta).toEqual({ role: 'user', thread: 'session_2' });
    expect(read.memories[3]!.text).toHaveLength(40);
    expect(read.cut).toBe(1);
    expect(read.lastSessionAt).toBe(Date.UTC(2024, 3, 2) + MESSAGE_STEP_MS);
  });

  it('flattens gold ids, keeps knowledge updates’ two versions and drops ids that name no message', () => {
    const read = readBeamChat('beam/1', chat, probes, 1000);
    expect(read.probes).toEqual([
      { question: 'When is the demo?', type: 'knowledge_update', gold: ['0', '2'], original: ['0'], updated: ['2'] },
      { question: 'In what order did I mention things?', type: 'event_ordering', gold: ['0', '2', '4'] },
      { question: 'What is my cat called?', type: 'abstention', gold: [] },
    ]);
    expect(read.unknownGold).toBe(1);
  });

  it('refuses a session without a date', () => {
    const undated = [{ batch_number: 1, turns: [[{ role: 'user', id: 0, content: 'hi' }]] }];
    expect(() => readBeamChat('beam/x', undated, {}, 100)).toThrow(/session 1 has no dated message/);
  });

  const dir = mkdtempSync(join(tmpdir(), 'beam-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads numbered folders in numeric order, preferring chat_trunecated.json, and skips an absent folder', () => {
    for (const n of ['2', '10']) {
      mkdirSync(join(dir, n));
      writeFileSync(join(dir, n, 'chat.json'), JSON.stringify(chat));
      writeFileSync(join(dir, n, 'probing_questions.json'), JSON.stringify(probes));
    }
    writeFileSync(join(dir, '10', 'chat_trunecated.json'), JSON.stringify([chat[1]]));
    const chats = loadBeam(dir, 1000);
    expect(chats.map((c) => [c.name, c.memories.length])).toEqual([['beam/2', 6], ['beam/10', 2]]);
    expect(loadBeamOrSkip(join(dir, 'absent'), 1000, 'test')).toBeNull();
  });
});

describe('BEAM scoring', () => {
  const update: BeamQuestion = { question: 'q', type: 'knowledge_update', gold: ['a', 'b', 'c'], original: ['a'], updated: ['b', 'c'] };

  it('counts an updated message above every original one as current first, absent ranking below all', () => {
    expect(scoreBeamQuestion(['x', 'c', 'a'], update)).toEqual({ any: true, recall: 2 / 3, currentFirst: true, updatedFound: true, originalFound: true });
    expect(scoreBeamQuestion(['a', 'b'], update)).toMatchObject({ currentFirst: false, updatedFound: true, originalFound: true });
    expect(scoreBeamQuestion(['b'], update)).toMatchObject({ currentFirst: true, originalFound: false });
    expect(scoreBeamQuestion(['x'], update)).toEqual({ any: false, recall: 0, currentFirst: false, updatedFound: false, originalFound: false });
  });

  it('reads only the first 10 ranked ids', () => {
    const ranked = [...Array.from({ length: 10 }, (_, i) => `x${i}`), 'b', 'a'];
    expect(scoreBeamQuestion(ranked, update)).toMatchObject({ any: false, recall: 0, currentFirst: false });
  });

  it('leaves current first out where the versions are missing or the same message', () => {
    expect(scoreBeamQuestion(['a'], { ...update, updated: [] }).currentFirst).toBeUndefined();
    expect(scoreBeamQuestion(['a'], { ...update, original: ['a'], updated: ['a'] }).currentFirst).toBeUndefined();
  });

  it('averages per type and overall, without abstention, and shares current first over the updates with two versions', () => {
    const acc = new BeamAccumulator();
    acc.add(update, ['b', 'a']);
    acc.add(update, ['a', 'b']);
    acc.add(update, ['c']);
    acc.add({ ...update, original: ['a'], updated: ['a'] }, ['z']);
    acc.add({ question: 'q', type: 'summarization', gold: ['a', 'b'] }, ['a']);
    acc.add({ question: 'q', type: 'abstention', gold: [] }, ['a']);
    const report = acc.report('r', 1.5);
    expect(Object.keys(report.byType)).toEqual(['knowledge_update', 'summarization']);
    expect(report.byType.knowledge_update!.n).toBe(4);
    expect(report.byType.knowledge_update!.any10).toBe(0.75);
    expect(report.byType.knowledge_update!.r10).toBeCloseTo((2 / 3 + 2 / 3 + 1 / 3 + 0) / 4, 10);
    expect(report.byType.summarization).toEqual({ n: 1, any10: 1, r10: 0.5 });
    expect(report.overall.n).toBe(5);
    expect(report.overall.any10).toBeCloseTo(4 / 5, 10);
    expect(report.overall.r10).toBeCloseTo((5 / 3 + 0.5) / 5, 10);
    // Three updates with two distinct versions: first, second (original above), updated alone.
    expect(report.current.n).toBe(3);
    expect(report.current.currentFirst).toBeCloseTo(2 / 3, 10);
    expect(report.current.updatedFound).toBe(1);
    expect(report.current.originalFound).toBeCloseTo(2 / 3, 10);
    expect(report.current.bothFound).toBe(2);
    expect(report.current.firstWhenBoth).toBe(1);
    expect(report.meanQueryMs).toBe(1.5);
  });
});
