/**
 * The demo in every engine, Chromium included: load the sample, search, see hits and the trace, and no console
 * errors (test/browser/demo*.test.ts drive the rest of the demo in Chromium).
 */
import { describe, expect, test } from 'vitest';
import { baseURL, enginesToRun, textOf, usePage, waitInPage } from './support.js';

const engines = enginesToRun(['chromium', 'firefox', 'webkit']);
if (engines.length === 0) test.skip('no engine selected (ENGRAM_ENGINES)', () => {});


describe.each(engines)('%s', (engine) => {
  const tab = usePage(engine);


  test('loads the sample, searches, shows hits and the trace, logs no errors', async () => {
    const { page } = tab;
    await page.open(`${baseURL()}/demo/`);
    await waitInPage(page, `/^\\d+ memor/.test(${textOf('#status-count')})`, 60_000);
    // A dialog would stall WebDriver; the demo asks none on an empty database, but answer yes if it ever does.
    await page.evaluate(`window.confirm = () => true; document.querySelector('#load-sample').click();`);
    await waitInPage(page, `/^2\\d\\d memories/.test(${textOf('#status-count')})`, 120_000);
    await waitInPage(page, `/^model: engram-/.test(${textOf('#status-model-label')})`, 120_000);

    await page.evaluate(`const query = document.querySelector('#query'); query.value = 'timezone bug'; query.dispatchEvent(new Event('input', { bubbles: true }));`);
    // The vector leg joins once the model has embedded the sample; the page re-ranks by itself when it does.
    await waitInPage(page, `${textOf('#results-summary')}.includes('hybrid') && document.querySelectorAll('#hits li.hit').length > 0`, 120_000);
    const shown = await page.evaluate<{ hits: number; marks: number; traceRows: number; storage: string; summary: string }>(`
      return {
        hits: document.querySelectorAll('#hits li.hit').length,
        marks: document.querySelectorAll('#hits mark').length,
        traceRows: document.querySelectorAll('#trace tbody tr').length,
        storage: ${textOf('#status-storage')},
        summary: ${textOf('#results-summary')},
      };
    `);
    expect(shown.hits).toBe(5);
    expect(shown.marks).toBeGreaterThan(0);
    expect(shown.traceRows).toBeGreaterThanOrEqual(7);
    expect(shown.storage).toMatch(engine === 'webkit' ? /idb/ : /opfs/);
    expect(page.consoleErrors()).toEqual([]);
  });
});
