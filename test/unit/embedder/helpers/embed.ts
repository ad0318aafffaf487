/** Child of node-wasm.test.ts: embeds its arguments with the built-in model and prints the vectors and the runtime used. */
import { createRequire } from 'node:module';
import { createEmbedder } from '../../../../src/embedder/index.js';

const embedder = await createEmbedder();
const vectors = await embedder.embed(process.argv.slice(2));
const loaded = Object.keys(createRequire(import.meta.url).cache);
console.log(JSON.stringify({
  id: embedder.id,
  vectors: vectors.map((vector) => Array.from(vector)),
  nativeBinding: loaded.some((file) => file.endsWith('onnxruntime_binding.node')),
  ortHook: Symbol.for('onnxruntime') in globalThis,
}));
