/** Browser side of the embedder benchmark: the same cases as in Node, on each requested device. */
import { createEmbedder } from '../../src/embedder/index.js';
import { measureCase, MODEL_CASES, type CaseResult } from './measure.js';

export async function run(devices: ('wasm' | 'webgpu')[], corpus: string[], budgetMs: number): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const device of devices) {
    for (const model of MODEL_CASES) results.push(await measureCase(model, device, corpus, budgetMs));
  }
  return results;
}

/** What 'auto' decides for each model here (a calibration, unless remembered in this profile). */
export async function autoChoices(): Promise<{ model: string; choice: unknown }[]> {
  const choices = [];
  for (const model of MODEL_CASES) {
    const embedder = await createEmbedder({ ...model.options, device: 'auto', rememberDevice: false });
    choices.push({ model: model.label, choice: embedder.deviceChoice });
    await embedder.dispose();
  }
  return choices;
}
