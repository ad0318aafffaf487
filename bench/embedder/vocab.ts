/**
 * How the built-in model's vocabulary size (and SIF a) was chosen: builds each variant into a temp folder and
 * measures the vector leg alone on the LoCoMo dev data (recall@10 over categories 1–4, every turn embedded as
 * "speaker: text [image: caption]"), plus the share of word tokens the vocabulary lacks.
 * Run: npx tsx bench/embedder/vocab.ts [--vocab 20000,30000,50000] [--sif-a 0.001]. Skips without the data.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildModel } from '../../scripts/build-model.js';
import { gloveRecipe } from '../../scripts/models/index.js';
import { GLOVE_MODEL_ID } from '../../scripts/models/glove.js';
import { createEmbedder } from '../../src/embedder/index.js';

const LOCOMO = resolve(fileURLToPath(new URL('../../', import.meta.url)), '../shared/data/locomo-dev');

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
interface Conversation {
  turns: Turn[];
  questions: { question: string; evidence: string[] }[];
}

function conversations(): Conversation[] {
  return readdirSync(LOCOMO)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => {
      const raw = JSON.parse(readFileSync(join(LOCOMO, name), 'utf8')) as Record<string, unknown>;
      const turns = Object.entries(raw)
        .filter(([key]) => /^session_\d+$/.test(key))
        .flatMap(([, value]) => value as Turn[]);
      const qa = raw.qa as { question: string; evidence: string[]; category: number }[];
      const ids = new Set(turns.map((turn) => turn.dia_id));
      const questions = qa
        .filter((q) => q.category !== 5)
        .map((q) => ({ question: q.question, evidence: q.evidence.flatMap((e) => e.split(/[;\s]+/)).filter((id) => ids.has(id)) }))
        .filter((q) => q.evidence.length > 0);
      return { turns, questions };
    });
}

const turnText = (turn: Turn) => `${turn.speaker}: ${turn.text}${turn.blip_caption ? ` [image: ${turn.blip_caption}]` : ''}`;

async function measure(modelPath: string, data: Conversation[]): Promise<{ recall10: number; oov: number }> {
  const embedder = await createEmbedder({ modelPath, batchSize: 64 });
  let recall = 0;
  let questions = 0;
  let words = 0;
  let unknown = 0;
  const vocab = new Set(Object.keys((JSON.parse(readFileSync(join(modelPath, GLOVE_MODEL_ID, 'tokenizer.json'), 'utf8')) as { model: { vocab: object } }).model.vocab));
  for (const conversation of data) {
    const texts = conversation.turns.map(turnText);
    for (const word of texts.join(' ').toLowerCase().normalize('NFD').match(/[a-z0-9]+/g) ?? []) {
      words++;
      if (!vocab.has(word)) unknown++;
    }
    const vectors = await embedder.embed(texts);
    const queries = await embedder.embed(conversation.questions.map((q) => q.question));
    conversation.questions.forEach((q, i) => {
      const query = queries[i] as Float32Array;
      const top = vectors
        .map((vector, index) => ({ index, score: vector.reduce((sum, value, k) => sum + value * (query[k] as number), 0) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, 10)
        .map(({ index }) => conversation.turns[index]?.dia_id);
      recall += q.evidence.filter((id) => top.includes(id)).length / q.evidence.length;
      questions++;
    });
  }
  await embedder.dispose();
  return { recall10: recall / questions, oov: unknown / words };
}

async function main(): Promise<void> {
  if (!existsSync(LOCOMO)) {
    console.log(`skipped: LoCoMo dev data not found at ${LOCOMO}`);
    return;
  }
  const { values } = parseArgs({ options: { vocab: { type: 'string', default: '20000,30000,40000,50000,100000' }, 'sif-a': { type: 'string', default: '0.001' } } });
  const data = conversations();
  for (const sifA of values['sif-a'].split(',').map(Number)) {
    for (const vocabSize of values.vocab.split(',').map(Number)) {
      const root = mkdtempSync(join(tmpdir(), 'engram-vocab-'));
      try {
        const { manifest } = buildModel(gloveRecipe({ vocabSize, sifA }), root);
        const q8 = manifest.files['onnx/model_quantized.onnx']?.bytes ?? 0;
        const { recall10, oov } = await measure(root, data);
        console.log(`vocab ${vocabSize}, a ${sifA}: q8 ${(q8 / 1e6).toFixed(1)} MB, recall@10 ${recall10.toFixed(4)}, word tokens not in vocab ${(oov * 100).toFixed(1)}%`);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    }
  }
}

await main();
