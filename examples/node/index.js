// Engram in plain Node: the in-process engine with the built-in model, no worker, no browser, no network.
import { createEmbedder, createEngine } from 'engram/node';

const embedder = await createEmbedder(); // the built-in model, from the installed package
const engine = await createEngine({ embedder });

await engine.add([
  { text: 'The staging server moved to eu-west-2 in March', project: 'infra', tags: ['ops'] },
  { text: 'Grandma likes tulips and orchids in her garden', tags: ['family'] },
  { text: 'The quarterly report is due on the first Friday of July', tags: ['work'] },
]);

const query = process.argv[2] ?? 'which flowers does grandma like?';
const { hits, trace } = await engine.search(query, { k: 3 });
console.log(JSON.stringify({ query, mode: trace.mode, embedder: embedder.id, hits: hits.map((hit) => hit.text) }, null, 2));
await engine.close();
