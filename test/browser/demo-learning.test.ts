/**
 * The demo's learning-from-use parts, driven in real Chromium on the real demo page (worker, OPFS, built-in model):
 * "Replay questions" asks the sample questions (and one more) several times with reinforcement on, and the page
 * shows associations forming (a running count, the status bar); a hit's association view lists its edges with
 * weights; turning *Follow associations* on brings in an associative hit whose view says why it came in; use
 * promotes memories to core, which the status counts and the core filter selects. Two imported memories carry
 * markup in their text: once associated, each shows in the other's view as typed, and nothing in it runs.
 *
 * The page runs with its CSP bypassed, so the renderers alone must keep memory text from being read as HTML.
 */
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { SAMPLE_QUERIES } from '../../demo/sample-memories.js';
import { baseURL, launchBrowser, trapPayloads } from './harness.js';
import { settled } from './pages/demo-page.js';

const SHOTS = 'test-results';
/** A word no sample memory has: the lexical leg returns exactly the two hostile memories for it. */
const TOKEN = 'zqxjvault';
const HOSTILE = [
  `${TOKEN}: the spare key for the harbour studio hangs behind the fuse box <img src=x onerror="window.__xss=1">`,
  `Renew the passport before the March trip to Porto, ${TOKEN} <svg onload=window.__xss=2></svg><b>bold</b> &amp; done`,
];
const PASSES = 5;

let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchBrowser({ webgpu: false });
});

afterAll(async () => {
  await browser?.close();
});

interface Watch {
  executed: string[];
  errors: string[];
}

/** Records a payload that runs (the window.__xss trap, dialogs) and page errors. */
async function watch(page: Page): Promise<Watch> {
  const w: Watch = { executed: [], errors: [] };
  await trapPayloads(page, (what) => void w.executed.push(what));
  page.on('dialog', (dialog) => {
    w.executed.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => void w.errors.push(error.message));
  return w;
}

const generationOf = (page: Page) => page.$eval('#hits', (el) => Number((el as HTMLElement).dataset.generation ?? 0));
const learning = (page: Page) =>
  page.$eval('#status-learning', (el) => ({
    core: Number((el as HTMLElement).dataset.core),
    associations: Number((el as HTMLElement).dataset.associations),
    text: el.textContent ?? '',
  }));

/** Opens the association view of the hit `id` and waits until it has loaded. */
async function openView(page: Page, id: string): Promise<void> {
  const view = page.locator(`#hits li.hit[data-id="${id}"] .assoc`);
  await view.locator('button.assoc-toggle').click();
  expect(await view.locator('button.assoc-toggle').getAttribute('aria-expanded')).toBe('true');
  await expect.poll(() => view.locator('.assoc-body').getAttribute('data-state')).toBe('loaded');
}

interface EdgeShown {
  id: string;
  weight: number;
  text: string;
  /** Elements inside the memory text: none, whatever the text holds. */
  elements: number;
}

async function edgesShown(page: Page, id: string): Promise<EdgeShown[]> {
  return page.$$eval(`#hits li.hit[data-id="${id}"] .assoc-edges li`, (items) =>
    items.map((li) => {
      const text = li.querySelector('.assoc-text')!;
      return { id: (li as HTMLElement).dataset.id ?? '', weight: Number(li.querySelector('.assoc-weight')?.textContent), text: text.textContent ?? '', elements: text.children.length };
    }),
  );
}

test('replaying questions forms associations, the view shows them, and an associative hit says why it came in', async () => {
  const context = await browser.newContext({ bypassCSP: true });
  try {
    const page = await context.newPage();
    const w = await watch(page);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${baseURL()}/demo/`);
    await expect.poll(() => page.textContent('#status-count'), { timeout: 60_000 }).toMatch(/^0 memories/);
    expect((await learning(page)).associations).toBe(0);

    // The sample, then two memories with markup in their text, imported as a JSON file.
    await page.click('#load-sample');
    await expect.poll(() => page.textContent('#status-count'), { timeout: 120_000 }).toMatch(/^2\d\d memories/);
    const sampleCount = Number((await page.textContent('#status-count'))!.split(' ')[0]);
    // Written a minute apart, as one sitting, so they support each other: a batch at one instant takes no neighbour
    // support (issue 28).
    const writtenAt = Date.now() - 2 * 60_000;
    const hostile = HOSTILE.map((text, i) => ({ text, createdAt: writtenAt + i * 60_000 }));
    await page.setInputFiles('#import-file', { name: 'hostile.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(hostile)) });
    await expect.poll(() => page.textContent('#status-count'), { timeout: 120_000 }).toBe(`${sampleCount + 2} memories`);
    await expect.poll(() => page.textContent('#status-model-label'), { timeout: 120_000 }).toMatch(/^model: engram-/);
    await expect.poll(() => page.$eval('#status-indexing', (el) => (el as HTMLElement).hidden), { timeout: 120_000 }).toBe(true);
    await settled(page, 0);
    expect(await learning(page)).toMatchObject({ core: 0, associations: 0 });

    // The replay list starts as the sample questions; add the hostile memories' word as one more.
    expect((await page.inputValue('#replay-questions')).split('\n')).toEqual(SAMPLE_QUERIES);
    const questions = [...SAMPLE_QUERIES, TOKEN];
    await page.fill('#replay-questions', questions.join('\n'));
    expect(await page.inputValue('#replay-passes')).toBe(String(PASSES));
    // Every progress line the page shows, to check the count runs as the replay goes.
    await page.evaluate(() => {
      const lines: string[] = [];
      (window as unknown as { __progress: string[] }).__progress = lines;
      const slot = document.getElementById('replay-progress')!;
      new MutationObserver(() => lines.push(slot.textContent ?? '')).observe(slot, { childList: true, characterData: true, subtree: true });
    });
    // With MMR novelty (λ 0.78, the default λ being 1): each replayed search's hits then spread over more notes,
    // which forms the associations that bring a note in later. An associative candidate scores below the hit it
    // came through, so with λ 1 on this sample none outscores the last direct hit.
    await page.locator('#opt-lambda').fill('0.78');
    await page.click('#replay-run');
    await expect.poll(() => page.textContent('#replay-progress'), { timeout: 120_000 }).toMatch(/^Replayed /);
    expect(await page.isEnabled('#replay-run')).toBe(true);
    expect(await page.textContent('#replay-progress')).toMatch(new RegExp(`^Replayed ${questions.length} questions × ${PASSES} passes: \\d+ associations`));

    // One progress line per question, the association count never falling, and the count there from the first pass.
    const progress = await page.evaluate(() => (window as unknown as { __progress: string[] }).__progress);
    const running = progress.flatMap((line) => {
      const m = /^pass (\d+)\/(\d+) · question (\d+)\/(\d+) · (\d+) associations/.exec(line);
      return m ? [{ pass: Number(m[1]), question: Number(m[3]), associations: Number(m[5]) }] : [];
    });
    expect(running.length).toBe(PASSES * questions.length);
    expect(running[0]!.associations).toBeGreaterThan(0);
    for (let i = 1; i < running.length; i++) expect(running[i]!.associations).toBeGreaterThanOrEqual(running[i - 1]!.associations);
    const passes = await page.$$eval('#replay-log li', (items) => items.map((li) => li.textContent ?? ''));
    expect(passes.length).toBe(PASSES);
    // No association is strong enough in the first pass; by the last, the associate stage brings memories in.
    const broughtIn = passes.map((line) => Number(/brought in (\d+) candidate/.exec(line)?.[1]));
    expect(broughtIn[0]).toBe(0);
    expect(broughtIn.at(-1)).toBeGreaterThan(0);
    passes.forEach((line, i) => expect(line).toMatch(new RegExp(`^pass ${i + 1} \\(.+\\): associations \\d+ → \\d+; the associate stage brought in \\d+ candidates?, \\d+ of them among the hits; \\d+ core$`)));

    // The status bar counts what formed, as the last progress line does.
    await expect.poll(async () => (await learning(page)).associations).toBe(running.at(-1)!.associations);
    const formed = await learning(page);
    expect(formed.associations).toBeGreaterThan(0);
    expect(formed.text).toMatch(/^\d+ core · \d+ associations · 0 links$/);
    // Five passes a week apart: the notes several questions return are used enough to become core.
    expect(formed.core).toBeGreaterThan(0);
    await page.screenshot({ path: `${SHOTS}/demo-learning-replay.png` });

    // After the replay the page searches the last question with its own options: the two hostile memories lead.
    let generation = await settled(page, 0);
    expect(await page.inputValue('#query')).toBe(TOKEN);
    // The hostile memories' ids, in HOSTILE's order.
    const shownIds = await page.$$eval('#hits li.hit', (items) => Object.fromEntries(items.map((li) => [li.querySelector('.hit-text')?.textContent ?? '', (li as HTMLElement).dataset.id ?? ''])));
    const hostileIds = HOSTILE.map((text) => shownIds[text]);
    expect(hostileIds.every(Boolean), JSON.stringify(shownIds)).toBe(true);

    // The first one's view lists the second, retrieved with it in every pass, as typed: text, no elements.
    await openView(page, hostileIds[0]!);
    const edges = await edgesShown(page, hostileIds[0]!);
    expect(edges.length).toBeGreaterThan(0);
    const partner = edges.find((edge) => edge.id === hostileIds[1]);
    expect(partner, JSON.stringify(edges)).toBeDefined();
    expect(partner!.text).toBe(HOSTILE[1]);
    expect(partner!.elements).toBe(0);
    // Five strengthenings a week apart, the last at "now": 0.1 each, fading with a 90-day time constant.
    let expected = 0;
    for (let pass = 0; pass < PASSES; pass++) expected = expected * Math.exp(-7 / 90) + 0.1;
    expect(partner!.weight).toBeCloseTo(expected, 2);
    for (const edge of edges) expect(edge.elements).toBe(0);
    const inView = await page.$eval(`#hits li.hit[data-id="${hostileIds[0]}"] .assoc`, (view) => ({
      elements: [...view.querySelectorAll('img, svg, b, script, iframe')].length,
      onAttributes: [...view.querySelectorAll('*')].flatMap((el) => [...el.attributes].filter((a) => a.name.startsWith('on')).map((a) => a.name)),
    }));
    expect(inView).toEqual({ elements: 0, onAttributes: [] });

    // The view stays open when the hits render again.
    await page.locator('#opt-k').fill('6');
    generation = await settled(page, generation);
    expect(await page.isVisible(`#hits li.hit[data-id="${hostileIds[0]}"] .assoc-body`)).toBe(true);
    await expect.poll(() => page.getAttribute(`#hits li.hit[data-id="${hostileIds[0]}"] .assoc-body`, 'data-state')).toBe('loaded');
    await expect.poll(async () => (await edgesShown(page, hostileIds[0]!)).length).toBe(edges.length);

    // Follow associations: some sample question now brings in a memory through an association.
    await page.check('#opt-associations');
    generation = await settled(page, generation);
    let found: { query: string; id: string } | null = null;
    for (const query of SAMPLE_QUERIES) {
      await page.fill('#query', query);
      generation = await settled(page, generation);
      const id = await page.$$eval('#hits li.hit', (items) => (items.find((li) => li.querySelector('.badge.associative')) as HTMLElement | undefined)?.dataset.id ?? null);
      if (id) {
        found = { query, id };
        break;
      }
    }
    expect(found, 'no sample question brought in an associative hit').not.toBeNull();
    const hit = page.locator(`#hits li.hit[data-id="${found!.id}"]`);
    expect(await page.locator('#trace tbody tr[data-stage="associate"]').count()).toBe(1);
    expect(await page.textContent('#results-summary')).toMatch(/\d+ associative/);
    const badge = (await hit.locator('.badge.associative').textContent())!;
    const [, viaRank, badgeWeight] = /via (?:#(\d+)|a candidate) · w (\d\.\d\d)$/.exec(badge) ?? [];
    expect(badgeWeight, badge).toBeDefined();

    // Its view says why it came in: through which memory, the weight, the cosine, and the score they make.
    await openView(page, found!.id);
    const why = hit.locator('.assoc-why');
    expect(await why.isVisible()).toBe(true);
    const rows = await why.locator('.fig').evaluateAll((figs) => Object.fromEntries(figs.map((f) => [f.querySelector('dt')?.textContent ?? '', f.querySelector('dd')?.textContent ?? ''])));
    expect(Object.keys(rows)).toEqual(expect.arrayContaining(['via', 'weight', 'cosine', 'fused', 'score']));
    expect(Math.abs(Number(rows.weight!.split(' ')[0]) - Number(badgeWeight))).toBeLessThanOrEqual(0.0051);
    expect(rows.cosine).toBe(await hit.locator('.explain .fig:has(dt:text-is("cos")) dd').textContent());
    expect(rows.score).toMatch(/^score \d\.\d{4} = fused \d\.\d{4} × recency \d\.\d{3} × boost \d\.\d{3}/);
    // Every factor of the fused score is shown, and they multiply to it.
    const [, fusedShown, viaFused, similarity, weight] = /^fused (\d\.\d{4}) = fused of the hit it came through (\d\.\d{4}) × calibrated cosine (\d\.\d{3}) × weight (\d\.\d{3})$/.exec(rows.fused!) ?? [];
    expect(fusedShown, rows.fused).toBeDefined();
    expect(Math.abs(Number(viaFused) * Number(similarity) * Number(weight) - Number(fusedShown))).toBeLessThan(0.002);
    expect(rows.score!.slice('score '.length, 'score '.length + 6)).toBe(await hit.locator('.explain .fig:has(dt:text-is("score")) dd').textContent());
    if (viaRank) {
      // The hit it came through is on the page: the view names it by rank and text.
      const viaText = await page.locator('#hits li.hit').nth(Number(viaRank) - 1).locator('.hit-text').textContent();
      expect(rows.via!.startsWith(`#${viaRank} `)).toBe(true);
      expect(viaText!.startsWith(rows.via!.slice(`#${viaRank} `.length).replace(/…$/, ''))).toBe(true);
    }
    await page.screenshot({ path: `${SHOTS}/demo-learning-associative.png` });

    // Core memories: the filter keeps only them, and each is marked.
    await page.selectOption('#opt-filterCore', 'core');
    let coreShown = 0;
    for (const query of SAMPLE_QUERIES) {
      await page.fill('#query', query);
      generation = await settled(page, generation);
      const marks = await page.$$eval('#hits li.hit', (items) => items.map((li) => li.querySelector('.badge.core') !== null));
      expect(marks.every(Boolean)).toBe(true);
      coreShown += marks.length;
    }
    expect(coreShown).toBeGreaterThan(0);
    await page.selectOption('#opt-filterCore', 'any');
    generation = await settled(page, generation);

    // Stability decay is offered and searches through the worker; its knobs show only with it.
    expect(await page.isVisible('#opt-betaDays')).toBe(false);
    await page.selectOption('#opt-decayKind', 'stability');
    generation = await settled(page, generation);
    expect(await page.isVisible('#opt-betaDays')).toBe(true);
    expect(await page.isVisible('#opt-coreFloor')).toBe(true);
    expect(await page.locator('#hits li.hit').count()).toBeGreaterThan(0);
    expect(await page.textContent('#status-message')).not.toMatch(/failed/);

    expect(w).toEqual({ executed: [], errors: [] });
    expect(await generationOf(page)).toBeGreaterThan(0);
  } finally {
    await context.close();
  }
});
