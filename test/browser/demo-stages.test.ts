/**
 * The demo's retrieval-stage controls and its language-model picker, driven in real Chromium on the real demo page
 * (worker, OPFS, built-in model): the re-ranking, quality and tag-weight controls change the search and show in
 * the trace and the explain figures; an OpenAI-compatible endpoint picked in the page feeds synthesis and HyDE,
 * whose queries and token counts show in the trace panel; with no model picked, the LLM stages are skipped with a
 * note and no request leaves the page.
 *
 * The endpoint is a scripted model served by this test (scripted-endpoint.ts: a tiny node:http server on 127.0.0.1):
 * it answers `/chat/completions` with fixed text and fixed `usage`, chosen by which stage's prompt it received. No
 * real model runs here; what is tested is the demo's wiring (request, CORS, CSP, token display), not answer quality.
 */
import { describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import type { recordRequests } from './harness.js';
import { demoSession, settled } from './pages/demo-page.js';
import type { ScriptedAnswer } from './scripted-endpoint.js';

const SHOTS = 'test-results';

/** What the scripted endpoint answers, by stage (recognised from the stage's prompt). */
const SYNTHESIZED = ['daylight saving hourly buckets shifted', 'UTC conversion for display', 'tide times an hour off'];
const SYNTHESIS_USAGE = { prompt_tokens: 131, completion_tokens: 17 };
const HYDE_TEXT = 'I fixed the timezone bug by generating everything in UTC and converting to Europe/Lisbon only for display.';
const HYDE_USAGE = { prompt_tokens: 97, completion_tokens: 23 };
const UNDERSTOOD = '{"type":"temporal","complexity":"moderate"}';
const UNDERSTAND_USAGE = { prompt_tokens: 64, completion_tokens: 9 };
const RERANKED = '3, 1, 2';
const RERANK_USAGE = { prompt_tokens: 402, completion_tokens: 5 };

/** Picks the stage's answer above from its prompt. */
function answer(prompt: string): ScriptedAnswer {
  if (prompt.includes('Write the note they would have saved')) return { text: HYDE_TEXT, usage: HYDE_USAGE };
  if (prompt.startsWith('Classify a question')) return { text: UNDERSTOOD, usage: UNDERSTAND_USAGE };
  if (prompt.includes('Rank the memories')) return { text: RERANKED, usage: RERANK_USAGE };
  return { text: SYNTHESIZED.join('\n'), usage: SYNTHESIS_USAGE };
}

const session = demoSession(SHOTS, answer);

async function generationOf(page: Page): Promise<number> {
  return page.$eval('#hits', (el) => Number((el as HTMLElement).dataset.generation ?? 0));
}

/** Opens the demo with the sample loaded and the vector leg ready, searching `query` with the default options. */
async function openDemo(query: string): Promise<{ page: Page; requests: ReturnType<typeof recordRequests> }> {
  const { page, requests } = await session.openPage();
  if (!/^2\d\d memories/.test((await page.textContent('#status-count')) ?? '')) {
    await page.click('#load-sample');
    await expect.poll(() => page.textContent('#status-count'), { timeout: 120_000 }).toMatch(/^2\d\d memories/);
  }
  await expect.poll(() => page.textContent('#status-model-label'), { timeout: 120_000 }).toMatch(/^model: engram-/);
  await page.click('#reset-options');
  await page.fill('#query', query);
  await expect.poll(() => page.textContent('#results-summary'), { timeout: 120_000 }).toContain('hybrid');
  await settled(page, 0);
  return { page, requests };
}

/** The trace panel's stage rows: name, note and the tokens cell. */
async function traceStages(page: Page): Promise<{ name: string; note: string; tokens: string }[]> {
  return page.$$eval('#trace .waterfall tbody tr', (rows) =>
    rows.map((row) => ({
      name: (row as HTMLElement).dataset.stage ?? '',
      note: row.querySelector('.note')?.textContent ?? '',
      tokens: row.querySelector('td.tokens')?.textContent ?? '',
    })),
  );
}

/** The explain figures of each shown hit, by figure name. */
async function explainFigures(page: Page): Promise<{ id: string; figures: Record<string, string> }[]> {
  return page.$$eval('#hits li.hit', (items) =>
    items.map((item) => ({
      id: (item as HTMLElement).dataset.id ?? '',
      figures: Object.fromEntries([...item.querySelectorAll('.explain .fig')].map((fig) => [fig.querySelector('dt')?.textContent ?? '', fig.querySelector('dd')?.textContent ?? ''])),
    })),
  );
}

async function queryLists(page: Page): Promise<{ source: string; weight: string; text: string; hyde: boolean }[]> {
  return page.$$eval('#trace .query-lists tbody tr', (rows) =>
    rows.map((row) => ({
      source: row.querySelector('.source')?.textContent ?? '',
      weight: row.querySelector('.query-weight')?.textContent ?? '',
      text: row.querySelector('.query-text')?.textContent ?? '',
      hyde: row.querySelector('.hyde-text') !== null,
    })),
  );
}

describe('the demo’s stage controls', () => {
  test('re-ranking by the page’s hook or by rules adds a rerank stage, and quality and tag weight show in explain', async () => {
    const { page } = await openDemo('timezone bug');
    let generation = await generationOf(page);
    expect((await traceStages(page)).map((s) => s.name)).not.toContain('rerank');
    // Every stage option is a control in its group, starting at the library default.
    expect(await page.$eval('#opt-rerankBy', (el) => (el as HTMLSelectElement).value)).toBe('off');
    expect(await page.$eval('#opt-synthesis', (el) => (el as HTMLSelectElement).value)).toBe('off');
    expect(await page.$eval('#opt-assembly', (el) => (el as HTMLSelectElement).value)).toBe('hedge');
    expect(await page.inputValue('#opt-dateBoost')).toBe('4');
    expect(await page.inputValue('#opt-qualityWeight')).toBe('0.1');
    expect(await page.inputValue('#opt-tagWeight')).toBe('0.35');
    const legends = await page.$$eval('#controls legend', (all) => all.map((l) => l.firstChild?.textContent?.trim()));
    expect(legends).toEqual(expect.arrayContaining(['Query understanding & expansion', 'Re-ranking', 'Assembly']));

    // Quality: the sample's timezone bugs carry one; qualityWeight × quality shows as an explain figure.
    const withQuality = (await explainFigures(page)).filter((hit) => hit.figures.quality);
    expect(withQuality.length, 'no hit with a quality figure').toBeGreaterThan(0);
    for (const hit of withQuality) {
      const [, value, added] = /^([\d.]+) \(\+([\d.]+)\)$/.exec(hit.figures.quality ?? '') ?? [];
      expect(Number(added)).toBeCloseTo(0.1 * Number(value), 4);
    }
    await page.locator('#opt-qualityWeight').fill('1');
    generation = await settled(page, generation);
    const heavier = (await explainFigures(page)).filter((hit) => hit.figures.quality);
    expect(heavier.length).toBeGreaterThan(0);
    for (const hit of heavier) {
      const [, value, added] = /^([\d.]+) \(\+([\d.]+)\)$/.exec(hit.figures.quality ?? '') ?? [];
      expect(Number(added)).toBeCloseTo(Number(value), 4);
    }
    await page.locator('#opt-qualityWeight').fill('0.1');
    generation = await settled(page, generation);

    // Tag weight: redundancy counts shared tags, so the MMR values change with it where hits share tags (the
    // garden notes do; the timezone hits share too few for Jaccard to pass their similarity). Novelty counts only
    // below λ 1, the default.
    await page.fill('#query', 'garden');
    await page.locator('#opt-lambda').fill('0.78');
    generation = await settled(page, generation);
    const mmrAt = async (weight: string) => {
      await page.locator('#opt-tagWeight').fill(weight);
      generation = await settled(page, generation);
      return (await explainFigures(page)).map((hit) => `${hit.id}:${hit.figures.mmr}`);
    };
    const noTags = await mmrAt('0');
    const allTags = await mmrAt('1');
    expect(allTags).not.toEqual(noTags);
    await page.locator('#opt-tagWeight').fill('0.35');
    await page.locator('#opt-lambda').fill('1');
    generation = await settled(page, generation);
    await page.fill('#query', 'timezone bug');
    generation = await settled(page, generation);

    // The page's own re-ranker (query words first) through `rerank: { by: 'hook' }`.
    await page.selectOption('#opt-rerankBy', 'hook');
    generation = await settled(page, generation);
    const hooked = await traceStages(page);
    const rerank = hooked.find((s) => s.name === 'rerank');
    expect(rerank?.note).toMatch(/^hook: \d+ of \d+ placed$/);
    expect(hooked.map((s) => s.name).indexOf('rerank')).toBe(hooked.map((s) => s.name).indexOf('adjust') + 1);
    const moves = (await explainFigures(page)).map((hit) => hit.figures.rerank);
    expect(moves.every((move) => /^#\d+ (→ #\d+|=) \(hook\)$/.test(move ?? '')), JSON.stringify(moves)).toBe(true);
    // Both words of the query come first: the hook's order is visible in the hits.
    expect(await page.$eval('#hits li.hit .hit-text', (el) => el.textContent?.toLowerCase() ?? '')).toMatch(/timezone[\s\S]*bug|bug[\s\S]*timezone/);
    await page.locator('#opt-rerankInputLimit').fill('2');
    generation = await settled(page, generation);
    expect((await traceStages(page)).find((s) => s.name === 'rerank')?.note).toMatch(/^hook: \d+ of 2 placed$/);
    await page.screenshot({ path: `${SHOTS}/demo-stages-rerank-hook.png`, fullPage: true });

    // Rules: the deterministic re-ranker, with no model and no hook.
    await page.selectOption('#opt-rerankBy', 'rules');
    generation = await settled(page, generation);
    const rules = (await traceStages(page)).find((s) => s.name === 'rerank');
    expect(rules?.note).toMatch(/^rules: \d+ of 2 placed$/);
    expect(await page.textContent('#controls')).toContain('Re-ranking');
    expect(await page.textContent('#controls legend:has-text("Re-ranking") .changed-count')).toBe('2 changed');

    await page.selectOption('#opt-assembly', 'diverse');
    generation = await settled(page, generation);
    expect((await traceStages(page)).map((s) => s.name)).toContain('diversify');
    await page.close();
  });

  test('with no model picked, the LLM stages are skipped with a note and no request leaves the page', async () => {
    const endpoint = session.endpoint();
    const { page, requests } = await openDemo('timezone bug');
    let generation = await generationOf(page);
    const before = endpoint.requests.length + endpoint.preflights;
    expect(await page.$eval('#llm-backend', (el) => (el as HTMLSelectElement).value)).toBe('none');
    // Fill in an endpoint, then go back to none: a filled URL alone must not be called.
    await page.selectOption('#llm-backend', 'endpoint');
    await page.fill('#llm-url', endpoint.url);
    await page.press('#llm-url', 'Enter');
    await page.selectOption('#llm-backend', 'none');
    generation = await settled(page, generation);

    await page.selectOption('#opt-understand', 'llm');
    await page.selectOption('#opt-synthesis', 'llm');
    await page.locator('#opt-hyde').check();
    await page.selectOption('#opt-rerankBy', 'llm');
    generation = await settled(page, generation);
    const stages = await traceStages(page);
    const noteOf = (name: string) => stages.find((s) => s.name === name)?.note ?? `(no ${name} stage)`;
    expect(noteOf('synthesize')).toMatch(/^skipped: .*no language model is picked/);
    expect(noteOf('hyde')).toMatch(/^skipped: .*no language model is picked/);
    expect(noteOf('rerank')).toMatch(/^skipped: .*no language model is picked/);
    expect(noteOf('understand')).toMatch(/^rules: .*no language model is picked/);
    // Only the caller's query was searched; the search still answered.
    expect((await queryLists(page)).map((q) => q.source)).toEqual(['your query']);
    expect(await page.locator('#hits li.hit').count()).toBe(5);
    expect(await page.textContent('#trace .llm-totals')).toContain('language model: none');

    // Chrome's built-in model: this Chromium has the Prompt API global but no model, so the choice is disabled with the reason.
    const chrome = await page.$eval('#llm-backend option[value="prompt-api"]', (el) => ({ disabled: (el as HTMLOptionElement).disabled, label: el.textContent }));
    expect(chrome).toEqual({ disabled: true, label: 'Chrome’s built-in model (unavailable)' });
    expect(await page.textContent('#llm-chrome-reason')).toMatch(/unavailable|no Prompt API/);

    // A URL the CSP does not allow is refused in the page, before any request. The model stages are off while it is
    // typed: picking the endpoint searches at once with the URL typed before, which under load can beat the typing.
    await page.selectOption('#opt-understand', 'rules');
    await page.selectOption('#opt-synthesis', 'off');
    await page.locator('#opt-hyde').uncheck();
    await page.selectOption('#opt-rerankBy', 'off');
    generation = await settled(page, generation);
    await page.selectOption('#llm-backend', 'endpoint');
    await page.fill('#llm-url', 'https://api.example.com/v1');
    await page.press('#llm-url', 'Enter');
    await page.selectOption('#opt-synthesis', 'llm');
    generation = await settled(page, generation);
    expect(await page.textContent('#llm-status')).toContain('only local endpoints');
    expect((await traceStages(page)).find((s) => s.name === 'synthesize')?.note).toMatch(/^skipped: .*only local endpoints/);
    await page.screenshot({ path: `${SHOTS}/demo-stages-no-model.png`, fullPage: true });

    expect(requests.foreign()).toEqual([]);
    expect(endpoint.requests.length + endpoint.preflights).toBe(before);
    await page.close();
  });

  test('an OpenAI-compatible endpoint picked in the page feeds synthesis and HyDE, with their queries and tokens in the trace', async () => {
    const endpoint = session.endpoint();
    const { page, requests } = await openDemo('timezone bug');
    let generation = await generationOf(page);
    const before = endpoint.requests.length;
    await page.selectOption('#llm-backend', 'endpoint');
    await page.fill('#llm-url', endpoint.url);
    await page.fill('#llm-model', 'scripted-model');
    await page.press('#llm-model', 'Enter');
    generation = await settled(page, generation);
    expect(await page.textContent('#llm-status')).toBe(`Using ${endpoint.url} (scripted-model).`);
    // Picking a model calls nothing by itself: no stage asks for it yet.
    expect(endpoint.requests.length).toBe(before);

    await page.selectOption('#opt-synthesis', 'llm');
    generation = await settled(page, generation);
    let stages = await traceStages(page);
    const synthesize = stages.find((s) => s.name === 'synthesize');
    expect(synthesize?.note).toBe(SYNTHESIZED.join(' | '));
    expect(synthesize?.tokens).toBe(`${SYNTHESIS_USAGE.prompt_tokens} / ${SYNTHESIS_USAGE.completion_tokens}`);
    expect(await queryLists(page)).toEqual([
      { source: 'your query', weight: '×2', text: 'timezone bug', hyde: false },
      ...SYNTHESIZED.map((text) => ({ source: 'LLM', weight: '×1', text, hyde: false })),
    ]);
    const total = SYNTHESIS_USAGE.prompt_tokens + SYNTHESIS_USAGE.completion_tokens;
    expect(await page.textContent('#trace .llm-totals')).toBe(
      `language model: ${endpoint.url} (scripted-model) · 1 call · tokens ${SYNTHESIS_USAGE.prompt_tokens} prompt + ${SYNTHESIS_USAGE.completion_tokens} completion = ${total}`,
    );
    // Each hit's explain has its rank in each of the four lists.
    const lists = (await explainFigures(page)).map((hit) => hit.figures.lists ?? '');
    expect(lists.every((l) => l.split(' · ').length === 4), JSON.stringify(lists)).toBe(true);

    // The request the page sent: the model name, the synthesis prompt with the query, an output limit.
    const sent = endpoint.requests.at(-1);
    expect(sent?.model).toBe('scripted-model');
    expect(sent?.messages[0]?.content).toContain('Question: timezone bug');
    expect(sent?.max_tokens).toBeGreaterThan(0);

    // HyDE: one more list, vector only, its text marked; the stage's tokens add to the totals.
    await page.locator('#opt-hyde').check();
    generation = await settled(page, generation);
    stages = await traceStages(page);
    expect(stages.find((s) => s.name === 'hyde')?.tokens).toBe(`${HYDE_USAGE.prompt_tokens} / ${HYDE_USAGE.completion_tokens}`);
    const shown = await queryLists(page);
    expect(shown.at(-1)).toEqual({ source: 'HyDE', weight: '×1', text: HYDE_TEXT, hyde: true });
    const prompt = SYNTHESIS_USAGE.prompt_tokens + HYDE_USAGE.prompt_tokens;
    const completion = SYNTHESIS_USAGE.completion_tokens + HYDE_USAGE.completion_tokens;
    expect(await page.textContent('#trace .llm-totals')).toContain(`2 calls · tokens ${prompt} prompt + ${completion} completion = ${prompt + completion}`);

    // The model's reading of the query, and its re-ranking: four calls, every stage's tokens in the sums.
    await page.selectOption('#opt-understand', 'llm');
    await page.selectOption('#opt-rerankBy', 'llm');
    generation = await settled(page, generation);
    stages = await traceStages(page);
    expect(stages.find((s) => s.name === 'understand')).toMatchObject({ note: 'temporal, moderate (llm)', tokens: `${UNDERSTAND_USAGE.prompt_tokens} / ${UNDERSTAND_USAGE.completion_tokens}` });
    expect(stages.find((s) => s.name === 'rerank')).toMatchObject({ note: expect.stringMatching(/^llm: 3 of \d+ placed$/), tokens: `${RERANK_USAGE.prompt_tokens} / ${RERANK_USAGE.completion_tokens}` });
    expect(await page.textContent('#trace .understanding')).toContain('temporal');
    expect(await page.textContent('#trace .understanding')).toMatch(/by\s*llm/);
    const all = [SYNTHESIS_USAGE, HYDE_USAGE, UNDERSTAND_USAGE, RERANK_USAGE];
    const allPrompt = all.reduce((n, u) => n + u.prompt_tokens, 0);
    const allCompletion = all.reduce((n, u) => n + u.completion_tokens, 0);
    expect(await page.textContent('#trace .llm-totals')).toContain(`4 calls · tokens ${allPrompt} prompt + ${allCompletion} completion = ${allPrompt + allCompletion}`);
    const reranked = (await explainFigures(page)).map((hit) => hit.figures.rerank ?? '');
    expect(reranked.some((move) => /^#3 → #1 \(llm\)$/.test(move)), JSON.stringify(reranked)).toBe(true);

    // The list weight control moves the caller's weight in the trace.
    await page.locator('#opt-originalQueryWeight').fill('3');
    generation = await settled(page, generation);
    expect((await queryLists(page))[0]?.weight).toBe('×3');
    await page.locator('#trace').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/demo-stages-endpoint.png`, fullPage: true });

    // Requests left the page only for the endpoint the user typed.
    const origin = new URL(endpoint.url).origin;
    expect(requests.foreign().length).toBeGreaterThan(0);
    expect(requests.foreign().filter((url) => !url.startsWith(origin))).toEqual([]);
    await page.close();
  });
});
