/**
 * The framework adapters from the packed tarball: each example under examples/ installs Engram's tarball beside the
 * real framework package from the registry; LangChain, the AI SDK and the MCP client run in plain `node`, React in
 * Chromium after a Vite build.
 */
import { describe, expect, test } from 'vitest';
import { buildScript, builtExample, consumerBrowser, installExample, launchChromium, logPage, serveStatic, sh } from './harness.js';

/** The JSON object a script printed last (after any warnings). */
const lastJson = <T>(output: string): T => JSON.parse(output.slice(output.indexOf('{\n'))) as T;

describe('engram/langchain from the packed tarball, with @langchain/core', () => {
  test('the retriever fills the prompt of a runnable chain with the recalled memory', async () => {
    const app = await installExample('langchain');
    const result = lastJson<{ answer: string; prompt: string[]; metadata: { id: string; score: number; createdAt: number; explain: { vecRank: number | null } } }>(
      await sh('node', ['index.js', 'which flowers does grandma like?'], app),
    );
    expect(result.answer).toBe('Tulips and orchids.');
    expect(result.prompt[0]).toBe('Answer from these memories:\n- Grandma likes tulips and orchids in her garden');
    expect(result.prompt[1]).toBe('which flowers does grandma like?');
    expect(result.metadata).toMatchObject({ id: expect.any(String), score: expect.any(Number), createdAt: expect.any(Number) });
    // The built-in model answered too: the hit has a vector rank, not only a BM25 one.
    expect(result.metadata.explain.vecRank).toBe(1);
  });
});

describe('engram/ai-sdk from the packed tarball, with ai and zod', () => {
  test("generateText's mock model remembers, recalls and forgets through the tools", async () => {
    const app = await installExample('ai-sdk');
    const result = lastJson<{ text: string; remember: { id: string }; recall: { context: string; tokens: number; ids: string[] }; forget: { removed: number }; left: number; stagingGone: boolean }>(
      await sh('node', ['index.js', 'which flowers does grandma like?'], app),
    );
    expect(result.text).toBe('Tulips and orchids.');
    expect(result.recall.ids).toEqual([result.remember.id]);
    expect(result.recall.context).toMatch(/^\[\d{4}-\d{2}-\d{2}\] Grandma likes tulips and orchids in her garden$/);
    expect(result.recall.tokens).toBeGreaterThan(0);
    expect(result.forget).toEqual({ removed: 1 });
    expect(result).toMatchObject({ left: 1, stagingGone: true });
  });
});

describe('engram-mcp from the packed tarball, driven by @modelcontextprotocol/sdk', () => {
  test('`npx engram-mcp` remembers, recalls after a restart, and two servers share one file', async () => {
    const app = await installExample('mcp');
    const result = lastJson<{ tools: string[]; remembered: string; context: string; mode: string; explain: { vecRank: number | null }; twoServers: { ids: string[]; recent: string[] } }>(
      await sh('node', ['index.js', 'which flowers does grandma like?'], app, { ENGRAM_DB: 'consumer.sqlite3' }),
    );
    expect(result.tools.sort()).toEqual(['forget', 'forgotten', 'pin', 'recall', 'remember', 'restore', 'timeline', 'why']);
    expect(result.context).toMatch(/^\[\d{4}-\d{2}-\d{2}\] Grandma likes tulips and orchids in her garden$/);
    // The built-in model answered from the installed package: hybrid, with a vector rank.
    expect(result.mode).toBe('hybrid');
    expect(result.explain.vecRank).toBe(1);
    // Each server's write is in the file the other reads: the recent resource lists all three, newest first.
    expect(result.twoServers.ids).toHaveLength(2);
    expect(result.twoServers.recent.slice(0, 2).sort()).toEqual([...result.twoServers.ids].sort());
    expect(result.twoServers.recent[2]).toBe(result.remembered);
  }, 600_000);

  test('the bin prints its usage on stderr and refuses a missing --db', async () => {
    const app = await installExample('mcp');
    const error = await sh('npx', ['engram-mcp'], app).catch((e: Error) => e.message);
    expect(error).toMatch(/--db <file> is required/);
  });
});

describe('engram/react from the packed tarball, with React 19, built by Vite', () => {
  const browser = consumerBrowser();

  test('useMemory opens the database, useSearch finds what was added as the user types', async () => {
    // Its build script, run once (harness.ts).
    expect(buildScript('react')).toBe('vite build');
    const app = await builtExample('react');
    const server = await serveStatic(`${app}/dist`);
    const context = await launchChromium(browser.tempDir('react-profile'), browser.proxy().port);
    try {
      const page = logPage(await context.newPage());
      await page.goto(server.url);
      await page.waitForSelector('main[data-status=open]', { timeout: 60_000 });
      for (const [index, text] of ['The staging server moved to eu-west-2 in March', 'Grandma likes tulips and orchids in her garden'].entries()) {
        await page.fill('#add input[name=text]', text);
        await page.click('#add button');
        await expect.poll(() => page.textContent('#status'), { timeout: 30_000 }).toBe(`open, ${index + 1} added`);
      }
      await page.fill('#query', 'tulips');
      await expect.poll(() => page.textContent('#hits li:first-child'), { timeout: 30_000 }).toBe('Grandma likes tulips and orchids in her garden');
      await page.fill('#query', 'staging server');
      await expect.poll(() => page.textContent('#hits li:first-child'), { timeout: 30_000 }).toBe('The staging server moved to eu-west-2 in March');
    } finally {
      await context.close();
      await server.close();
    }
    expect(browser.proxy().requests).toEqual([]);
  });
});
