/**
 * The demo fed hostile memories: XSS payloads as text, tags, project, kind, meta, ids, LoCoMo speakers and
 * questions, file names and the query itself, brought in through the demo's own import and editor. They must
 * render as text everywhere they appear (hits, dropped list, context, project selects, LoCoMo questions, editor,
 * status line, confirm prompt), nothing may run, load or navigate, and the page's CSP (Trusted Types included)
 * must report no violation. Three runs: the dev server, the dev server with the CSP bypassed (the renderers
 * alone must be safe, not only because the CSP blocks what they would do), and the production build.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { build, preview, type PreviewServer } from 'vite';
import { baseURL, launchBrowser, trapPayloads } from './harness.js';
import { settled as settledSearch } from './pages/demo-page.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** The policy demo/index.html declares; the production build must carry it unchanged. */
const EXPECTED_CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:; " +
  "connect-src 'self' http://localhost:* http://127.0.0.1:*; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; " +
  "require-trusted-types-for 'script'; trusted-types engram-demo";

// ---- the hostile data ------------------------------------------------------------------------------------

/** Every payload sets window.__xss (or its parent's), calls alert, or loads a /xss-probe/ or xss.invalid URL if it runs. */
const PAYLOADS = [
  `<img src=x onerror="window.__xss=1">`,
  `<img src="/xss-probe/img" onerror=window.__xss=2>`,
  `<svg onload=window.__xss=3>`,
  `</script><script>window.__xss=4</script>`,
  `"><iframe srcdoc="<script>parent.__xss=5</script>">`,
  `'><iframe src="javascript:parent.__xss=6">`,
  `javascript:alert(1)`,
  `<a href="javascript:window.__xss=7" id=xss-link>click</a>`,
  `<details open ontoggle=window.__xss=8>`,
  `<style>@import "/xss-probe/css";</style>`,
  `<link rel=stylesheet href=/xss-probe/link>`,
  `<object data="/xss-probe/object"></object>`,
  `<math><mtext><table><mglyph><style><img src=x onerror=window.__xss=9>`,
  `{{constructor.constructor('window.__xss=10')()}}`,
  `<base href="https://xss.invalid/"><meta http-equiv="refresh" content="0;url=javascript:window.__xss=11">`,
  `" onmouseover="window.__xss=12" autofocus onfocus="window.__xss=13`,
];
/** Labels (project, kind) and tags hold no comma: the editor splits tags on commas. */
const PROJECTS = [`<img src=x onerror=window.__xss=20>`, `"><svg onload=window.__xss=21>`, `javascript:alert(2)`];
const KINDS = [`<script>window.__xss=22</script>`, `' onfocus='window.__xss=23`];
const TAGS = [`<iframe src=javascript:parent.__xss=24>`, `</span><img src=/xss-probe/tag>`, `\${window.__xss=25}`];
const HOSTILE_META = {
  html: `<img src=x onerror=window.__xss=26>`,
  thread: `</script><script>window.__xss=27</script>`,
  nested: { href: 'javascript:alert(3)', list: [`<svg onload=window.__xss=28>`] },
  // An own "__proto__" key (valid JSON): it must stay data, never set Object.prototype.__xss.
  ['__proto__']: { __xss: 29 },
};
/** Queries are user input too: they are highlighted, saved to localStorage and restored on reload. */
const QUERY = `xssprobe <img src=x onerror="window.__xss=30"> javascript:alert(4) "><svg onload=window.__xss=31>`;

interface Expected {
  id?: string;
  text: string;
  project?: string;
  kind?: string;
  tags: string[];
  supersededBy?: string;
}

/** A JSON file of plain inputs (ids assigned by Engram). */
const jsonInputs: Expected[] = PAYLOADS.map((payload, i) => ({
  text: `xssprobe ${payload}`,
  project: PROJECTS[i % PROJECTS.length],
  kind: KINDS[i % KINDS.length],
  tags: [TAGS[i % TAGS.length]!, payload.slice(0, 200)],
}));

/** An NDJSON export (records with ids, bookkeeping and supersession): ids are shown as data-id and in titles. */
const HOSTILE_IDS = [`"><img src=x onerror=window.__xss=40>`, `a"] , body, [x="`, `</li><script>window.__xss=41</script>`];
const exported: Expected[] = [
  { id: HOSTILE_IDS[0], text: 'xssprobe first record <b onmouseover=window.__xss=42>bold</b>', tags: [TAGS[0]!], project: PROJECTS[0] },
  { id: HOSTILE_IDS[1], text: "xssprobe second record ');window.__xss=43;('", tags: [], kind: KINDS[1] },
  // Superseded: shown only with deep recall, with the superseding id in the badge's title.
  { id: HOSTILE_IDS[2], text: 'xssprobe old record <svg><animate onbegin=window.__xss=44 attributeName=x dur=1s>', tags: [], supersededBy: HOSTILE_IDS[0] },
];

/** A LoCoMo conversation: sample id (→ project and ids), speakers, turn ids and questions are all hostile. */
const SAMPLE_ID = `<img src=x onerror=window.__xss=50>`;
const SPEAKER = `<svg onload=window.__xss=51>`;
const QUESTIONS = [`What did <img src=x onerror=window.__xss=52> say? xssprobe`, `"><script>window.__xss=53</script> xssprobe`];
const locomoTurns = [
  { speaker: SPEAKER, dia_id: 'D1:1', text: `xssprobe <iframe srcdoc="<script>parent.__xss=54</script>">` },
  { speaker: SPEAKER, dia_id: 'D1:2', text: 'xssprobe javascript:alert(5)' },
  { speaker: 'Bob', dia_id: `D1:3"><img src=x onerror=window.__xss=55>`, text: 'xssprobe </pre><script>window.__xss=56</script>' },
];
const locomoProject = `locomo-${SAMPLE_ID}`;
const locomo: Expected[] = locomoTurns.map((turn) => ({
  id: `${locomoProject}:${turn.dia_id}`,
  text: `${turn.speaker}: ${turn.text}`,
  project: locomoProject,
  kind: 'turn',
  tags: [],
}));

/** Added through the editor dialog. */
const edited: Expected = {
  text: 'xssprobe typed <img src=x onerror=window.__xss=60> in the editor',
  project: PROJECTS[1],
  kind: KINDS[0],
  tags: [TAGS[1]!, TAGS[2]!],
};

const FILES = {
  json: `<img src=x onerror=window.__xss=70>.json`,
  ndjson: `"><svg onload=window.__xss=71>.ndjson`,
  locomo: `<iframe srcdoc=x>locomo.json`,
  broken: `<script>window.__xss=72</script>.json`,
};
/** The engine's refusal quotes the bad value: it lands in the status line. */
const BROKEN_PRIORITY = `<img src=x onerror=window.__xss=73>`;

function importFiles(): { name: string; mimeType: string; buffer: Buffer }[] {
  const json = { memories: jsonInputs.map(({ text, project, kind, tags }) => ({ text, project, kind, tags, meta: HOSTILE_META })) };
  const records = exported.map(({ id, text, project, kind, tags, supersededBy }) => ({
    id, text, tags, project, kind, supersededBy, priority: 1, pinned: false, accessCount: 0, createdAt: Date.parse('2026-01-15T10:00:00Z'), meta: HOSTILE_META,
  }));
  const conversation = {
    sample_id: SAMPLE_ID,
    conversation: { speaker_a: SPEAKER, speaker_b: 'Bob', session_1_date_time: '1:56 pm on 8 May, 2023', session_1: locomoTurns },
    qa: QUESTIONS.map((question) => ({ question, evidence: ['D1:1'], category: 1 })),
  };
  const file = (name: string, mimeType: string, text: string) => ({ name, mimeType, buffer: Buffer.from(text) });
  return [
    file(FILES.json, 'application/json', JSON.stringify(json)),
    file(FILES.ndjson, 'application/x-ndjson', records.map((r) => JSON.stringify(r)).join('\n')),
    file(FILES.locomo, 'application/json', JSON.stringify(conversation)),
    file(FILES.broken, 'application/json', JSON.stringify([{ text: 'xssprobe never stored', priority: BROKEN_PRIORITY }])),
  ];
}

// ---- watching the page -----------------------------------------------------------------------------------

interface Watch {
  /** Anything a payload did: window.__xss set, a dialog other than the demo's confirm, a popup, a foreign navigation. */
  executed: string[];
  violations: string[];
  errors: string[];
  requests: string[];
  dialogs: { type: string; message: string }[];
}

/** Installs the watchers before the page's first script, on every (re)load of it. */
async function watch(page: Page): Promise<Watch> {
  const w: Watch = { executed: [], violations: [], errors: [], requests: [], dialogs: [] };
  await trapPayloads(page, (what) => void w.executed.push(what));
  await page.exposeBinding('__cspReport', (_source, what: string) => void w.violations.push(what));
  await page.addInitScript(() => {
    const cspReport = (globalThis as unknown as { __cspReport(what: string): void }).__cspReport;
    document.addEventListener('securitypolicyviolation', (event) =>
      cspReport(`${event.effectiveDirective} blocked ${event.blockedURI} at ${event.sourceFile}:${event.lineNumber} (${event.sample})`),
    );
  });
  page.on('dialog', (dialog) => {
    w.dialogs.push({ type: dialog.type(), message: dialog.message() });
    void dialog.accept();
  });
  page.on('popup', (popup) => void w.executed.push(`popup ${popup.url()}`));
  page.on('pageerror', (error) => void w.errors.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') w.errors.push(`console error: ${message.text()}`);
  });
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame() && new URL(frame.url()).pathname !== '/demo/') w.executed.push(`navigated to ${frame.url()}`);
  });
  // The context sees the worker's requests too.
  page.context().on('request', (request) => void w.requests.push(request.url()));
  return w;
}

/** Requests a payload would make: a foreign origin, a /xss-probe/ path, or the relative `src=x`. */
function suspiciousRequests(requests: string[], origin: string): string[] {
  return requests.filter((url) => {
    if (url.startsWith('data:') || url.startsWith('blob:')) return false;
    const parsed = new URL(url);
    return parsed.origin !== origin || parsed.pathname.includes('xss-probe') || /\/x$/.test(parsed.pathname);
  });
}

// ---- driving the demo ------------------------------------------------------------------------------------


const generationOf = (page: Page) => page.$eval('#hits', (el) => Number((el as HTMLElement).dataset.generation ?? 0));

interface ShownHit {
  id: string;
  text: string;
  /** Tag names of the elements inside the hit text: only the demo's <mark>s; markup in a memory would add others. */
  elementsInText: string[];
  project: string | null;
  kind: string | null;
  tags: string[];
  superseded: string | null;
  neighbour: string | null;
  actionLabels: string[];
}

async function shownHits(page: Page): Promise<ShownHit[]> {
  return page.$$eval('#hits li.hit', (items) =>
    items.map((item) => {
      const text = item.querySelector('.hit-text')!;
      return {
        id: (item as HTMLElement).dataset.id ?? '',
        text: text.textContent ?? '',
        elementsInText: [...text.querySelectorAll('*')].map((el) => el.tagName.toLowerCase()),
        project: item.querySelector('.tag.project')?.textContent ?? null,
        kind: item.querySelector('.tag.kind')?.textContent ?? null,
        tags: [...item.querySelectorAll('.tag:not(.kind):not(.project)')].map((el) => el.textContent ?? ''),
        superseded: item.querySelector('.badge.superseded')?.getAttribute('title') ?? null,
        neighbour: item.querySelector('.badge.neighbour')?.getAttribute('title') ?? null,
        actionLabels: [...item.querySelectorAll('.hit-actions button')].map((el) => el.getAttribute('aria-label') ?? ''),
      };
    }),
  );
}

/**
 * Elements that markup in the data would make (counted, to compare with the page before any data: the demo has a
 * skip link and a <details> of its own), plus what it never has: inline scripts, on* attributes, odd links.
 */
async function markup(page: Page): Promise<{ counts: Record<string, number>; never: string[] }> {
  return page.evaluate(() => {
    const watched = ['img', 'svg', 'iframe', 'object', 'embed', 'math', 'base', 'a', 'details', 'style', 'b', 'video', 'animate', 'meta', 'script'];
    const counts = Object.fromEntries(watched.map((tag) => [tag, document.getElementsByTagName(tag).length]));
    const never: string[] = [];
    for (const el of document.querySelectorAll('*')) {
      const tag = el.tagName.toLowerCase();
      if (tag === 'script' && !(el as HTMLScriptElement).src) never.push('inline <script>');
      if (tag === 'link' && !['stylesheet', 'icon', 'modulepreload'].includes((el as HTMLLinkElement).rel)) never.push(`<link rel=${(el as HTMLLinkElement).rel}>`);
      if (tag === 'link' && (el as HTMLLinkElement).href.includes('xss-probe')) never.push('<link> to a probe');
      for (const attribute of el.attributes) if (attribute.name.startsWith('on')) never.push(`${tag}[${attribute.name}]`);
    }
    return { counts, never };
  });
}

const allExpected = () => [...jsonInputs, ...exported, ...locomo, edited];
const byText = (text: string) => allExpected().find((m) => m.text === text);

/** Each shown hit is one of the hostile memories, character for character, labels and tags included. */
function expectHitsShownAsTyped(hits: ShownHit[]): void {
  for (const hit of hits) {
    const memory = byText(hit.text);
    expect(memory, `a hit whose text is not one of the memories: ${JSON.stringify(hit.text)}`).toBeDefined();
    // Only the demo's own highlighting may make elements inside a hit's text.
    expect(hit.elementsInText.every((tag) => tag === 'mark')).toBe(true);
    if (memory!.id) expect(hit.id).toBe(memory!.id);
    expect(hit.project).toBe(memory!.project ?? null);
    expect(hit.kind).toBe(memory!.kind ?? null);
    expect(hit.tags).toEqual(memory!.tags.map((tag) => `#${tag}`));
    const label = (action: string) => `${action}: ${memory!.text.slice(0, 60)}`;
    expect(hit.actionLabels.slice(1)).toEqual([label('Edit'), label('Delete')]);
    expect([label('Pin'), label('Unpin')]).toContain(hit.actionLabels[0]);
    if (hit.superseded !== null) expect(hit.superseded).toBe(`superseded by ${memory!.supersededBy}`);
  }
}

/** The context view: `[date] text` blocks, one per memory that fit, each text exactly as stored. */
async function expectContextShownAsTyped(page: Page, hits: ShownHit[]): Promise<void> {
  const context = await page.$eval('#context-text', (el) => ({ text: el.textContent ?? '', children: el.children.length }));
  expect(context.children).toBe(0);
  const blocks = context.text.split('\n\n').map((block) => block.replace(/^\[\d{4}-\d{2}-\d{2}\] /, ''));
  expect(new Set(blocks)).toEqual(new Set(hits.map((hit) => hit.text)));
}

async function importHostileFiles(page: Page, expectedCount: number): Promise<void> {
  await page.setInputFiles('#import-file', importFiles());
  await expect.poll(() => page.textContent('#status-count'), { timeout: 120_000 }).toBe(`${expectedCount} memories`);
  // The broken file is last: its refusal, quoting the file name and the bad value, stays in the status line.
  await expect.poll(() => page.textContent('#status-message'), { timeout: 60_000 }).toContain(`Importing ${FILES.broken} failed: `);
  const status = await page.$eval('#status-message', (el) => ({ text: el.textContent ?? '', title: el.getAttribute('title'), children: el.children.length }));
  expect(status.text).toContain(BROKEN_PRIORITY);
  expect(status.title).toBe(status.text);
  expect(status.children).toBe(0);
}

/** The whole visit; returns what it watched. */
async function visit(page: Page, origin: string, enforced: boolean): Promise<Watch> {
  const w = await watch(page);
  await page.goto(`${origin}/demo/`);
  if (enforced) expect(await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content')).toBe(EXPECTED_CSP);
  await expect.poll(() => page.textContent('#status-count'), { timeout: 60_000 }).toMatch(/^0 memories/);
  const before = await markup(page);
  expect(before.never).toEqual([]);

  // Import: JSON inputs, an NDJSON export (ids, supersession), a LoCoMo conversation and a file the engine refuses.
  await importHostileFiles(page, jsonInputs.length + exported.length + locomo.length);
  // Once the model has embedded everything the page re-ranks by itself: wait for that before reading the hits.
  await expect.poll(() => page.textContent('#status-model-label'), { timeout: 120_000 }).toMatch(/^model: engram-/);
  await expect.poll(() => page.$eval('#status-indexing', (el) => (el as HTMLElement).hidden), { timeout: 120_000 }).toBe(true);

  // The LoCoMo import moved "now" back to 2023; reset it, then show everything: 30 hits, no dedup, superseded too.
  await page.click('#reset-options');
  await page.locator('#opt-k').fill('30');
  await page.locator('#opt-tokenBudget').fill('4000');
  await page.check('#opt-raw');
  await page.check('#opt-deepRecall');
  let generation = await generationOf(page);
  await page.fill('#query', QUERY);
  generation = await settled(page, generation, w);

  // Before any content check: if a payload ran, say so first.
  expect(w.executed, 'a payload ran').toEqual([]);
  expect(w.violations, 'CSP violations').toEqual([]);
  let hits = await shownHits(page);
  expect(new Set(hits.map((hit) => hit.text))).toEqual(new Set([...jsonInputs, ...exported, ...locomo].map((m) => m.text)));
  expectHitsShownAsTyped(hits);
  expect(hits.find((hit) => hit.id === HOSTILE_IDS[2])?.superseded).toBe(`superseded by ${HOSTILE_IDS[0]}`);
  await expectContextShownAsTyped(page, hits);

  // Projects from the store fill both project selects: value and label are the project, as typed.
  const projectOptions = await page.$$eval('#opt-project option, #opt-filterProject option', (options) =>
    options.map((o) => ({ value: (o as HTMLOptionElement).value, label: o.textContent })).filter((o) => o.value),
  );
  const projects = [...new Set([...PROJECTS, locomoProject])];
  expect(projectOptions.length).toBe(2 * projects.length);
  for (const option of projectOptions) expect(option.label).toBe(option.value);
  expect(new Set(projectOptions.map((o) => o.value))).toEqual(new Set(projects));
  // Boost a hostile project: its value goes back into the search options as typed.
  await page.selectOption('#opt-project', PROJECTS[0]!);
  generation = await settled(page, generation, w);
  expect(await page.inputValue('#opt-project')).toBe(PROJECTS[0]);

  // Three hits: the rest are listed as dropped, text as typed (cut at 120 characters).
  await page.locator('#opt-k').fill('3');
  generation = await settled(page, generation, w);
  const dropped = await page.$$eval('#dropped li', (items) => items.map((li) => ({ text: li.textContent ?? '', children: li.children.length })));
  expect(dropped.length).toBe(hits.length - 3);
  for (const item of dropped) {
    expect(item.children).toBe(1); // the "dropped" label
    const text = item.text.replace(/^dropped \(was #\d+\) /, '');
    expect(allExpected().some((m) => (m.text.length > 120 ? `${m.text.slice(0, 117)}…` : m.text) === text), text).toBe(true);
  }
  await page.locator('#opt-k').fill('30');
  generation = await settled(page, generation, w);

  // LoCoMo questions are offered as queries, as typed; picking one searches for it and marks its evidence.
  const questionOptions = await page.$$eval('#locomo-questions option', (options) => options.map((o) => ({ value: (o as HTMLOptionElement).value, label: o.textContent })).filter((o) => o.value));
  expect(questionOptions).toEqual(QUESTIONS.map((q) => ({ value: q, label: q })));
  await page.selectOption('#locomo-questions', QUESTIONS[0]!);
  generation = await settled(page, generation, w);
  expect(await page.inputValue('#query')).toBe(QUESTIONS[0]);
  expect(await page.locator('#hits .badge.evidence').count()).toBe(1);
  expectHitsShownAsTyped(await shownHits(page));

  // Back to the hostile query; the editor shows a hostile memory's fields as typed.
  await page.fill('#query', QUERY);
  generation = await settled(page, generation, w);
  const jsonHit = (await shownHits(page)).find((hit) => hit.text === jsonInputs[0]!.text)!;
  await page.locator(`#hits li.hit[data-id="${jsonHit.id}"] button.edit`).click();
  await expect.poll(() => page.$eval('#editor', (d) => (d as HTMLDialogElement).open)).toBe(true);
  expect(await page.inputValue('#editor-text')).toBe(jsonInputs[0]!.text);
  expect(await page.inputValue('#editor-project')).toBe(jsonInputs[0]!.project);
  expect(await page.inputValue('#editor-kind')).toBe(jsonInputs[0]!.kind);
  expect(await page.inputValue('#editor-tags')).toBe(jsonInputs[0]!.tags.join(', '));
  expect(new Set(await page.$$eval('#editor-projects option', (o) => o.map((x) => (x as HTMLOptionElement).value)))).toEqual(new Set(projects));
  await page.click('#editor-form button[value="cancel"]');

  // Add one through the editor, typed as a user would.
  await page.click('#add-memory');
  await page.fill('#editor-text', edited.text);
  await page.fill('#editor-project', edited.project!);
  await page.fill('#editor-kind', edited.kind!);
  await page.fill('#editor-tags', edited.tags.join(', '));
  await page.click('#editor-form button[value="save"]');
  await expect.poll(() => page.textContent('#status-count'), { timeout: 60_000 }).toBe(`${jsonInputs.length + exported.length + locomo.length + 1} memories`);
  generation = await settled(page, generation, w);
  hits = await shownHits(page);
  expect(hits.some((hit) => hit.text === edited.text)).toBe(true);
  expectHitsShownAsTyped(hits);

  // Pin the hit whose id breaks out of a CSS selector: the demo re-finds it (CSS.escape) to give focus back.
  const breakout = HOSTILE_IDS[1]!;
  await page.locator('#hits li.hit').filter({ hasText: exported[1]!.text }).locator('button.pin').click();
  await expect.poll(() => page.evaluate(() => document.activeElement?.closest<HTMLElement>('li.hit')?.dataset.id)).toBe(breakout);
  expect(await page.evaluate(() => document.activeElement?.classList.contains('pin'))).toBe(true);

  // Delete one: the confirm prompt quotes the text, as text.
  const victim = locomo[2]!;
  await page.locator('#hits li.hit').filter({ hasText: victim.text }).locator('button.delete').click();
  await expect.poll(() => page.locator('#hits li.hit').filter({ hasText: victim.text }).count(), { timeout: 60_000 }).toBe(0);
  expect(w.dialogs).toEqual([{ type: 'confirm', message: `Delete this memory?\n\n${victim.text}` }]);

  // Export: every field, meta included, comes back as the same data.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  const records = JSON.parse(readFileSync((await download.path())!, 'utf8')) as { text: string; meta?: unknown; project?: string }[];
  expect(records.length).toBe(allExpected().length - 1);
  const withMeta = new Set([...jsonInputs, ...exported].map((m) => m.text));
  const hostileMeta = records.filter((r) => withMeta.has(r.text));
  expect(hostileMeta.length).toBe(withMeta.size);
  for (const record of hostileMeta) expect(JSON.stringify(record.meta)).toBe(JSON.stringify(HOSTILE_META));

  // Reload: the hostile query comes back from localStorage and is searched again.
  await page.reload();
  await expect.poll(() => page.inputValue('#query'), { timeout: 60_000 }).toBe(QUERY);
  await settled(page, 0, w);
  hits = await shownHits(page);
  expect(hits.length).toBe(allExpected().length - 1);
  expectHitsShownAsTyped(hits);
  await expectContextShownAsTyped(page, hits);

  const after = await markup(page);
  expect(after.never).toEqual([]);
  expect(after.counts).toEqual(before.counts);
  expect(await page.evaluate(() => [(window as { __xss?: unknown }).__xss, ({} as { __xss?: unknown }).__xss])).toEqual([undefined, undefined]);
  return w;
}

// ---- the runs --------------------------------------------------------------------------------------------

let browser: Browser;
let built: { dir: string; server: PreviewServer; origin: string } | undefined;

beforeAll(async () => {
  browser = await launchBrowser({ webgpu: false });
});

afterAll(async () => {
  await browser?.close();
  await built?.server.close();
  if (built) rmSync(built.dir, { recursive: true, force: true });
});

/** `vite build` of the demo (the repo's config names no input: index.html at the root does not exist), then `vite preview`. */
async function buildAndPreview(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'engram-demo-build-'));
  const configFile = join(REPO, 'vite.config.ts');
  await build({ configFile, root: REPO, logLevel: 'warn', build: { outDir: dir, emptyOutDir: true, rolldownOptions: { input: { demo: join(REPO, 'demo/index.html') }, checks: { pluginTimings: false } } } });
  const server = await preview({ configFile, root: REPO, logLevel: 'warn', build: { outDir: dir }, preview: { port: 0, host: '127.0.0.1', open: false } });
  const address = server.httpServer.address();
  if (!address || typeof address === 'string') throw new Error('vite preview has no port');
  built = { dir, server, origin: `http://127.0.0.1:${address.port}` };
  return built.origin;
}

test('dev server, CSP enforced: the sample loads and a suggested query searches with no violation', async () => {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const w = await watch(page);
    await page.goto(`${baseURL()}/demo/`);
    await expect.poll(() => page.textContent('#status-count'), { timeout: 60_000 }).toMatch(/^0 memories/);
    await page.click('#load-sample');
    await expect.poll(() => page.textContent('#status-count'), { timeout: 120_000 }).toMatch(/^2\d\d memories/);
    await expect.poll(() => page.textContent('#status-model-label'), { timeout: 120_000 }).toMatch(/^model: engram-/);
    const generation = await generationOf(page);
    await page.click('#sample-queries button.chip >> nth=1');
    await expect.poll(() => page.textContent('#results-summary'), { timeout: 120_000 }).toContain('hybrid');
    await settled(page, generation, w);
    expect(await page.locator('#hits li.hit').count()).toBeGreaterThan(0);
    expect(await page.locator('#trace tbody tr').count()).toBeGreaterThan(0);
    expect(w).toMatchObject({ executed: [], violations: [], errors: [] });
    expect(suspiciousRequests(w.requests, baseURL())).toEqual([]);
  } finally {
    await context.close();
  }
});

describe.each([
  { run: 'dev server, CSP enforced', enforced: true, origin: async () => baseURL() },
  { run: 'dev server, CSP bypassed: the renderers alone', enforced: false, origin: async () => baseURL() },
  { run: 'production build, CSP enforced', enforced: true, origin: buildAndPreview },
])('$run', ({ enforced, origin }) => {
  test('hostile memories show as typed everywhere, and nothing runs, loads or navigates', async () => {
    const base = await origin();
    const context = await browser.newContext({ bypassCSP: !enforced, acceptDownloads: true });
    try {
      const page = await context.newPage();
      const w = await visit(page, base, enforced);
      expect(w.executed).toEqual([]);
      expect(w.violations).toEqual([]);
      expect(w.errors).toEqual([]);
      expect(suspiciousRequests(w.requests, base)).toEqual([]);
      if (enforced) {
        // The CSP is really in force: Trusted Types refuse a string for innerHTML (and report it).
        const refused = await page.evaluate(() => {
          try {
            document.createElement('div').innerHTML = '<b>x</b>';
            return false;
          } catch {
            return true;
          }
        });
        expect(refused).toBe(true);
        await expect.poll(() => w.violations.length).toBe(1);
        expect(w.violations[0]).toMatch(/^require-trusted-types-for /);
      }
    } finally {
      await context.close();
    }
  });
});

/** The shared wait, saying what the page reported (payloads run, CSP violations, errors) when nothing renders. */
function settled(page: Page, after: number, w: Watch): Promise<number> {
  return settledSearch(page, after, () => `the page reported ${JSON.stringify({ executed: w.executed, violations: w.violations, errors: w.errors })}`);
}
