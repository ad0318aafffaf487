/** docs/formation.md reproduces the formation prompts verbatim and the token figures computed from their lengths. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import { DECIDE_PROMPT, EXTRACT_PROMPT, SUMMARIZE_PROMPT } from '../../../src/engine/formation-prompts.js';

const doc = readFileSync(resolve(__dirname, '../../../docs/formation.md'), 'utf8');

/** The first ```text block after the heading naming `name`. */
function blockAfter(name: string): string | undefined {
  const heading = doc.indexOf(`### \`${name}\``);
  if (heading < 0) return undefined;
  const m = /```text\n([\s\S]*?)\n```/.exec(doc.slice(heading));
  return m?.[1];
}

it.each([
  ['EXTRACT_PROMPT', EXTRACT_PROMPT],
  ['DECIDE_PROMPT', DECIDE_PROMPT],
  ['SUMMARIZE_PROMPT', SUMMARIZE_PROMPT],
])('%s is in the docs as it is in the code', (name, prompt) => {
  expect(blockAfter(name)).toBe(prompt);
  expect(doc).toContain(`${prompt.length} characters ≈ ${Math.ceil(prompt.length / 4)} tokens`);
});
