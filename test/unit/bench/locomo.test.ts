import { describe, expect, it } from 'vitest';
import { ndcgAt, recallAt, sessionRecallAt, MetricAccumulator } from '../../../bench/lib/metrics.js';
import { locomoTurnText, normaliseEvidenceIds, parseLocomoDate, readLocomoConversation } from '../../../bench/lib/locomo.js';

describe('LoCoMo reader', () => {
  it('parses session stamps as UTC', () => {
    expect(parseLocomoDate('1:56 pm on 8 May, 2023')).toBe(Date.UTC(2023, 4, 8, 13, 56));
    expect(parseLocomoDate('12:09 am on 13 September, 2023')).toBe(Date.UTC(2023, 8, 13, 0, 9));
    expect(() => parseLocomoDate('yesterday')).toThrow(/LoCoMo session date/);
  });

  it('normalises malformed evidence ids and drops ids that name no turn', () => {
    const known = new Set(['D8:6', 'D9:17', 'D11:26', 'D30:5']);
    expect(normaliseEvidenceIds(['D8:6; D9:17', 'D:11:26', 'D30:05', 'D99:1', 'nonsense'], known)).toEqual(['D8:6', 'D9:17', 'D11:26', 'D30:5']);
  });

  it('turns each turn into a memory dated by its session, threaded by session, with the caption', () => {
    const data = {
      conversation: {
        speaker_a: 'Ann',
        speaker_b: 'Bo',
        session_2_date_time: '9:00 am on 2 June, 2023',
        session_2: [{ speaker: 'Bo', dia_id: 'D2:1', text: 'Back from the lake.', blip_caption: 'a photo of a lake' }],
        session_1_date_time: '1:56 pm on 8 May, 2023',
        session_1: [
          { speaker: 'Ann', dia_id: 'D1:1', text: 'Hi!' },
          { speaker: 'Bo', dia_id: 'D1:2', text: 'Hey Ann.' },
        ],
        session_3_date_time: '9:00 am on 3 June, 2023',
      },
      qa: [
        { question: 'Where was Bo?', answer: 'a lake', evidence: ['D2:1'], category: 4 },
        { question: 'Adversarial?', evidence: [], category: 5 },
        { question: 42, evidence: ['D1:1'], category: 1 },
      ],
    };
    const conversation = readLocomoConversation(data, { idPrefix: 'c1/' });
    expect(conversation.memories.map((m) => m.id)).toEqual(['c1/D1:1', 'c1/D1:2', 'c1/D2:1']);
    expect(conversation.memories[2]).toEqual({
      id: 'c1/D2:1',
      text: 'Bo: Back from the lake. [shares an image: a photo of a lake]',
      createdAt: Date.UTC(2023, 5, 2, 9, 0),
      kind: 'turn',
      meta: { speaker: 'Bo', thread: 'c1/session_2' },
    });
    expect(conversation.lastSessionAt).toBe(Date.UTC(2023, 5, 2, 9, 0)); // a stamp without turns is not a session
    expect(conversation.questions).toEqual([
      { question: 'Where was Bo?', evidence: ['c1/D2:1'], category: 4 },
      { question: 'Adversarial?', evidence: [], category: 5 },
    ]);
    expect(locomoTurnText({ speaker: 'Ann', dia_id: 'D1:1', text: 'Hi!' })).toBe('Ann: Hi!');
    expect(() => readLocomoConversation({ qa: [] })).toThrow(/no LoCoMo sessions/);
    expect(() => readLocomoConversation(null)).toThrow(/must be an object/);
  });
});

describe('retrieval metrics', () => {
  it('recall@k counts the evidence found in the top k', () => {
    expect(recallAt(['a', 'b', 'c'], ['c', 'x'], 2)).toBe(0);
    expect(recallAt(['a', 'b', 'c'], ['c', 'x'], 3)).toBe(0.5);
    expect(recallAt(['a'], [], 5)).toBe(0);
  });

  it('nDCG@k uses binary gains and the ideal ordering of min(k, |relevant|) hits', () => {
    expect(ndcgAt(['a', 'b'], ['a'], 10)).toBe(1);
    expect(ndcgAt(['x', 'a'], ['a'], 10)).toBeCloseTo(1 / Math.log2(3), 12);
    expect(ndcgAt(['x', 'a', 'b'], ['a', 'b'], 10)).toBeCloseTo((1 / Math.log2(3) + 1 / Math.log2(4)) / (1 + 1 / Math.log2(3)), 12);
    expect(ndcgAt(['x', 'y', 'a'], ['a'], 2)).toBe(0);
  });

  it('averages per question', () => {
    const acc = new MetricAccumulator();
    acc.add(['D1:1'], ['D1:1']);
    acc.add(['D2:4'], ['D1:1']);
    expect(acc.row()).toEqual({ n: 2, r5: 0.5, r10: 0.5, r20: 0.5, ndcg10: 0.5, s10: 0.5 });
  });

  it('counts an evidence session as reached by any of its turns (session-level recall)', () => {
    expect(sessionRecallAt(['D1:2', 'D3:1'], ['D1:1', 'D2:5'], 10)).toBe(0.5);
    expect(sessionRecallAt(['c26:D1:2'], ['c26:D1:1', 'c26:D1:7'], 10)).toBe(1);
    expect(sessionRecallAt(['D2:1', 'D1:1'], ['D1:1'], 1)).toBe(0);
  });
});
