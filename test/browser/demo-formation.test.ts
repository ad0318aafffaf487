/**
 * The demo's conversation pane, driven in real Chromium on the real demo page (worker, OPFS, built-in model): a chat
 * typed as lines is remembered with the model picked in the page. With none picked the turns are stored as said and
 * the pane shows the NO_MODEL fallback; with an OpenAI-compatible endpoint picked, each decision shows with its
 * reason (added, superseded old → new, unchanged), and the demo's search finds the new fact.
 *
 * The endpoint is a scripted model served by this test (scripted-endpoint.ts): it recognises Engram's extraction and
 * decision prompts by their first lines (imported from the code, not copied) and answers JSON computed from the turns
 * and candidates in them. No real model runs here: what is tested is the pane's wiring, not extraction quality.
 */
import { describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { DECIDE_PROMPT, EXTRACT_PROMPT, SUMMARIZE_PROMPT } from '../../src/engine/formation-prompts.js';
import type { recordRequests } from './harness.js';
import { demoSession, settled } from './pages/demo-page.js';
import type { ScriptedAnswer } from './scripted-endpoint.js';

const SHOTS = 'test-results';

/** The facts the scripted model draws, by the user turn that says them. */
const FACTS: Record<string, string> = {
  'I live in Lisbon.': 'The user lives in Lisbon.',
  'I have a cat called Miso.': 'The user has a cat called Miso.',
  'I moved, so I live in Porto now.': 'The user lives in Porto.',
  'I started learning the cello.': 'The user started learning the cello.',
};
const EXTRACT_USAGE = { prompt_tokens: 180, completion_tokens: 40 };
const DECIDE_USAGE = { prompt_tokens: 250, completion_tokens: 60 };
const CONTRADICTION = 'the user now lives in Porto, no longer in Lisbon';
const REPEAT = 'already stored, word for word';
const NEW = 'new information about the user';

const firstLine = (prompt: string) => prompt.slice(0, prompt.indexOf('\n'));

/**
 * Extraction: a fact for each user turn in FACTS. Decision: `same` for a candidate equal to the fact, `contradict`
 * for a candidate saying the user lives in another city, else `add`. Summaries: "not one subject".
 */
function answer(prompt: string): ScriptedAnswer {
  if (prompt.startsWith(firstLine(EXTRACT_PROMPT))) {
    const facts = prompt.split('\n').flatMap((line) => {
      const turn = /^\[(\d+)\] \([^)]*\) user: (.*)$/.exec(line);
      const text = turn ? FACTS[turn[2]!] : undefined;
      return text ? [{ text, turns: [Number(turn![1])] }] : [];
    });
    return { text: JSON.stringify({ facts }), usage: EXTRACT_USAGE };
  }
  if (prompt.startsWith(firstLine(DECIDE_PROMPT))) {
    const facts: { index: number; text: string; candidates: { label: string; text: string }[] }[] = [];
    for (const line of prompt.split('\n')) {
      const fact = /^Fact (\d+): (.*)$/.exec(line);
      if (fact) facts.push({ index: Number(fact[1]), text: fact[2]!, candidates: [] });
      const candidate = /^ {2}(M\d+): (.*)$/.exec(line);
      if (candidate) facts.at(-1)!.candidates.push({ label: candidate[1]!, text: candidate[2]! });
    }
    const city = (text: string) => /lives in (\w+)/.exec(text)?.[1];
    const decisions = facts.map((f) => {
      const same = f.candidates.find((c) => c.text === f.text);
      if (same) return { fact: f.index, action: 'same', memory: same.label, reason: REPEAT };
      const other = f.candidates.find((c) => city(c.text) && city(f.text) && city(c.text) !== city(f.text));
      if (other) return { fact: f.index, action: 'contradict', memory: other.label, reason: CONTRADICTION };
      return { fact: f.index, action: 'add', memory: null, reason: NEW };
    });
    return { text: JSON.stringify({ decisions }), usage: DECIDE_USAGE };
  }
  if (prompt.startsWith(firstLine(SUMMARIZE_PROMPT))) return { text: '{"summary":null}', usage: { prompt_tokens: 90, completion_tokens: 6 } };
  return { text: 'unexpected prompt', usage: { prompt_tokens: 1, completion_tokens: 1 } };
}

const session = demoSession(SHOTS, answer);

async function memoryCount(page: Page): Promise<number> {
  return Number(/^(\d+) memor/.exec((await page.textContent('#status-count')) ?? '')?.[1] ?? NaN);
}

/** Opens the demo (an empty store at first) with the vector leg ready and the default options. */
async function openDemo(): Promise<{ page: Page; requests: ReturnType<typeof recordRequests> }> {
  const { page, requests } = await session.openPage();
  await expect.poll(() => page.textContent('#status-model-label'), { timeout: 120_000 }).toMatch(/^model: engram-/);
  await page.click('#reset-options');
  await expect.poll(() => page.isEnabled('#conversation-remember')).toBe(true);
  return { page, requests };
}

/** Types `chat` into the pane, presses Remember and waits for its result line. */
async function remember(page: Page, chat: string): Promise<string> {
  await page.fill('#conversation-text', chat);
  await page.click('#conversation-remember');
  await expect.poll(() => page.textContent('#conversation-summary'), { timeout: 60_000 }).toMatch(/turns? stored/);
  return (await page.textContent('#conversation-summary')) ?? '';
}

async function shownDecisions(page: Page): Promise<{ action: string; text: string; reason: string; code?: string }[]> {
  return page.$$eval('#conversation-decisions li', (items) =>
    items.map((item) => {
      const li = item as HTMLElement;
      const texts = [...li.querySelectorAll('.decision-text')].map((el) => el.textContent ?? '');
      return {
        action: li.dataset.action ?? '',
        text: texts.join(' → '),
        reason: li.querySelector('.decision-reason')?.textContent ?? '',
        ...(li.dataset.code ? { code: li.dataset.code } : {}),
      };
    }),
  );
}

async function search(page: Page, query: string): Promise<string[]> {
  const before = await page.$eval('#hits', (el) => Number((el as HTMLElement).dataset.generation ?? 0));
  await page.fill('#query', query);
  await settled(page, before);
  return page.$$eval('#hits li.hit .hit-text', (all) => all.map((el) => el.textContent ?? ''));
}

describe('the demo’s conversation pane', () => {
  test('with no model picked, remembering stores the turns and shows the NO_MODEL fallback', async () => {
    const endpoint = session.endpoint();
    const { page, requests } = await openDemo();
    const before = await memoryCount(page);
    const sent = endpoint.requests.length + endpoint.preflights;
    expect(await page.$eval('#llm-backend', (el) => (el as HTMLSelectElement).value)).toBe('none');

    const line = await remember(page, 'user: I keep bees on the roof of my building.\nassistant: How many hives?\nTwo, since spring.');
    expect(line).toMatch(/^3 turns stored · 3 added · 0 superseded · 0 unchanged · 0 model calls · tokens 0 prompt \+ 0 completion = 0 · \d+ ms · model: none$/);
    const shown = await shownDecisions(page);
    expect(shown[0]).toMatchObject({ action: 'fallback', code: 'NO_MODEL', text: 'model not used: the turns were stored as said' });
    expect(shown[0]!.reason).toMatch(/no language model is picked/);
    // A line without a role is the user's; each turn is added as said, with the fallback as its reason.
    expect(shown.slice(1).map((d) => [d.action, d.text])).toEqual([
      ['added', 'I keep bees on the roof of my building.'],
      ['added', 'How many hives?'],
      ['added', 'Two, since spring.'],
    ]);
    expect(shown.slice(1).every((d) => d.reason.startsWith('stored as said: no language model'))).toBe(true);

    // The page refreshed as after an edit: the count, then a search finds a turn.
    await expect.poll(() => memoryCount(page)).toBe(before + 3);
    expect(await search(page, 'bees roof')).toContain('I keep bees on the roof of my building.');

    await page.screenshot({ path: `${SHOTS}/demo-formation-no-model.png`, fullPage: true });

    // Consolidate runs too; with none picked it calls no model either.
    await page.click('#conversation-consolidate');
    await expect.poll(() => page.textContent('#conversation-summary'), { timeout: 60_000 }).toMatch(/^\d+ folded · \d+ summar.* · model: none$/);

    expect(endpoint.requests.length + endpoint.preflights).toBe(sent);
    expect(requests.foreign()).toEqual([]);
  });

  test('with an endpoint picked, a contradiction supersedes, a repeat is unchanged, a new fact is added and found', async () => {
    const endpoint = session.endpoint();
    const { page } = await openDemo();
    await page.selectOption('#llm-backend', 'endpoint');
    await page.fill('#llm-url', endpoint.url);
    await page.fill('#llm-model', 'scripted-model');
    await page.press('#llm-model', 'Enter');
    expect(await page.textContent('#llm-status')).toBe(`Using ${endpoint.url} (scripted-model).`);
    const before = endpoint.requests.length;

    // Two facts into a store holding only turns: nothing is close to them, so no decision call.
    let line = await remember(page, 'at: 2026-11-01\nuser: I live in Lisbon.\nassistant: Lovely city.\nuser: I have a cat called Miso.');
    expect(line).toContain('3 turns stored · 2 added · 0 superseded · 0 unchanged · 1 model call · tokens 180 prompt + 40 completion = 220');
    expect((await shownDecisions(page)).map((d) => [d.action, d.text])).toEqual([
      ['added', 'The user lives in Lisbon.'],
      ['added', 'The user has a cat called Miso.'],
    ]);

    // The update, the repeat and the new fact, dated by the `at:` line.
    line = await remember(page, 'at: 2026-11-20\nuser: I moved, so I live in Porto now.\nassistant: Congratulations!\nuser: I have a cat called Miso.\nuser: I started learning the cello.');
    // Two superseded: the contradicted fact, and the first chat's cat turn, which the same turn said again folds
    // into as add's supersede on add does.
    expect(line).toContain(
      `4 turns stored · 2 added · 2 superseded · 1 unchanged · 2 model calls · tokens ${EXTRACT_USAGE.prompt_tokens + DECIDE_USAGE.prompt_tokens} prompt + ${EXTRACT_USAGE.completion_tokens + DECIDE_USAGE.completion_tokens} completion = 530`,
    );
    expect(line).toContain(`model: ${endpoint.url} (scripted-model)`);
    const extract = endpoint.requests.slice(before).filter((r) => r.messages[0]!.content.startsWith(firstLine(EXTRACT_PROMPT))).at(-1);
    expect(extract?.messages[0]?.content).toContain('[0] (2026-11-20 00:00) user: I moved, so I live in Porto now.');

    const shown = await shownDecisions(page);
    expect(shown.find((d) => d.action === 'fallback')).toBeUndefined();
    expect(shown.filter((d) => d.action === 'added')).toEqual([
      { action: 'added', text: 'The user lives in Porto.', reason: CONTRADICTION },
      { action: 'added', text: 'The user started learning the cello.', reason: NEW },
    ]);
    expect(shown.filter((d) => d.action === 'superseded')).toEqual(
      expect.arrayContaining([
        { action: 'superseded', text: 'The user lives in Lisbon. → The user lives in Porto.', reason: CONTRADICTION },
        { action: 'superseded', text: 'I have a cat called Miso. → I have a cat called Miso.', reason: 'a near-duplicate (supersede on add)' },
      ]),
    );
    const unchanged = shown.filter((d) => d.action === 'unchanged');
    expect(unchanged).toEqual([{ action: 'unchanged', text: 'The user has a cat called Miso.', reason: REPEAT }]);
    expect(await page.textContent('#conversation-decisions li[data-action="unchanged"] .reinforced')).toBe('reinforced: The user has a cat called Miso.');

    // The demo's search finds the new fact, and answers the new city, not the superseded one.
    expect(await search(page, 'cello')).toContain('The user started learning the cello.');
    const lives = await search(page, 'where does the user live');
    expect(lives).toContain('The user lives in Porto.');
    expect(lives).not.toContain('The user lives in Lisbon.');
    await page.locator('#conversation').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/demo-formation-endpoint.png`, fullPage: true });
  });
});
