/**
 * examples/vite-app from the packed tarball in Firefox and WebKit (Chromium runs it in vite-app.test.ts): the
 * production build, open, add, hybrid search, and the memories still there after the page is opened again.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EnginePage } from '../browser/engines.js';
import { enginesToRun, textOf, usePage, waitInPage } from '../engines/support.js';
import { builtExample, startServer } from './harness.js';

const engines = enginesToRun(['firefox', 'webkit']);
if (engines.length === 0) test.skip('no engine selected (ENGRAM_ENGINES)', () => {});

let server: Awaited<ReturnType<typeof startServer>> | undefined;

beforeAll(async () => {
  // The app as shipped, built once for every test file that needs it (harness.ts).
  const app = await builtExample('vite-app');
  server = await startServer('npx', ['vite', 'preview', '--port', '0', '--host', '127.0.0.1'], app);
});

afterAll(async () => {
  await server?.stop();
});


/** Submits the search form until the trace says hybrid (the model loads in the background); the first hit's text. */
async function searchUntilHybrid(page: EnginePage, query: string): Promise<string> {
  return page.evaluate<string>(`
    const form = document.querySelector('#search');
    form.querySelector('input[name=query]').value = ${JSON.stringify(query)};
    for (let i = 0; i < 240; i++) {
      form.requestSubmit();
      await new Promise((r) => setTimeout(r, 250));
      if (${textOf('#mode')} === 'hybrid') return ${textOf('#hits li:first-child')};
    }
    throw new Error('no hybrid search within 60 s: ' + ${textOf('#mode')});
  `);
}

describe.each(engines)('%s', (engine) => {
  const tab = usePage(engine);


  test('production build: opens, adds, answers a hybrid search, and keeps the memories when opened again', async () => {
    const { page } = tab;
    await page.open(server!.url);
    await waitInPage(page, `document.body.dataset.state !== undefined`, 60_000);
    expect(await page.evaluate(`return ${textOf('#status')};`)).toMatch(/^ready: 0 memories/);

    const notes = ['The staging server moved to eu-west-2 in March', 'Grandma likes tulips and orchids in her garden'];
    for (const [index, note] of notes.entries()) {
      await page.evaluate(`const form = document.querySelector('#add'); form.querySelector('input[name=text]').value = ${JSON.stringify(note)}; form.requestSubmit();`);
      await waitInPage(page, `${textOf('#status')}.includes('${index + 1} memories')`, 30_000);
    }
    expect(await searchUntilHybrid(page, 'which flowers does grandma like?')).toMatch(/tulips/);

    await page.open(server!.url);
    await waitInPage(page, `document.body.dataset.state === 'ready'`, 60_000);
    expect(await page.evaluate(`return ${textOf('#status')};`)).toMatch(/2 memories/);
    expect(await searchUntilHybrid(page, 'where is staging hosted')).toMatch(/eu-west-2/);
    expect(page.consoleErrors()).toEqual([]);
  });
});
