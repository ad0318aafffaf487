/// <reference lib="webworker" />
/** Runs `open` + `embed` from embedder-lab.ts inside a module worker and posts the result back. */
import { embed, open, type LabOptions } from './embedder-lab.js';

self.onmessage = async (event: MessageEvent<{ options: LabOptions; texts: string[] }>) => {
  try {
    const info = await open('worker', event.data.options);
    const { vectors } = await embed('worker', event.data.texts);
    self.postMessage({ ok: true, result: { info, vectors } });
  } catch (error) {
    self.postMessage({ ok: false, error: error instanceof Error ? `${(error as { code?: string }).code ?? ''} ${error.message}` : String(error) });
  }
};
