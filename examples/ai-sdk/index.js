// Engram's tools in the AI SDK: the model remembers, recalls and forgets through generateText.
// The model is the AI SDK's own mock, scripted to call each tool, so this runs offline; put your model in its place.
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { engramTools } from 'engram/ai-sdk';
import { createEmbedder, createEngine } from 'engram/node';

const engine = await createEngine({ embedder: await createEmbedder() });
const [staging] = await engine.add({ text: 'The staging server moved to eu-west-2 in March', project: 'infra' });

const usage = { inputTokens: { total: 0, noCache: 0 }, outputTokens: { total: 0, text: 0 } };
const turn = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] });
const call = (toolName, input) => turn([{ type: 'tool-call', toolCallId: toolName, toolName, input: JSON.stringify(input) }], 'tool-calls');
const model = new MockLanguageModelV3({
  doGenerate: [
    call('remember', { text: 'Grandma likes tulips and orchids in her garden', tags: ['family'] }),
    call('recall', { query: process.argv[2] ?? 'which flowers does grandma like?', k: 1 }),
    call('forget', { ids: [staging] }),
    turn([{ type: 'text', text: 'Tulips and orchids.' }], 'stop'),
  ],
});

const { text, steps } = await generateText({ model, tools: engramTools({ memory: engine }), stopWhen: stepCountIs(5), prompt: 'Remember what grandma likes.' });
const [remember, recall, forget] = steps.slice(0, 3).map((step) => step.toolResults[0].output);
const left = (await engine.stats()).memories;
console.log(JSON.stringify({ text, remember, recall, forget, left, stagingGone: (await engine.get(staging)) === null }, null, 2));
await engine.close();
