/** docs/api.md's pipeline section shows each language-model prompt as sent: this keeps the two the same text. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hydePrompt } from '../../../src/search/hyde.js';
import { rerankPrompt } from '../../../src/search/rerank.js';
import { synthesizePrompt } from '../../../src/search/synthesize.js';
import { understandPrompt } from '../../../src/search/understand.js';

/** docs/api.md's `text` code blocks, each with the indentation of its fence removed. */
function readmePrompts(): string[] {
  const readme = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
  return [...readme.matchAll(/^( *)```text\n([\s\S]*?)\n *```$/gm)].map(([, indent, body]) =>
    (body as string)
      .split('\n')
      .map((line) => (line.startsWith(indent as string) ? line.slice((indent as string).length) : line))
      .join('\n'),
  );
}

describe('docs/api.md shows the prompts as sent', () => {
  const shown = readmePrompts();
  it.each([
    ['understand', understandPrompt('{question}')],
    ['synthesize', synthesizePrompt('{question}', 'factual')],
    ['hyde', hydePrompt('{question}')],
    ['rerank', rerankPrompt('{question}', [{ text: '{memory 1}' }, { text: '{memory 2}' }])],
  ])('%s', (_stage, prompt) => expect(shown).toContain(prompt));
});
