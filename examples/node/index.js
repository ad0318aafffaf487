// Engram in plain Node: the in-process engine with the built-in model and a database file, no worker, no browser,
// no network. Run it twice: the second run finds the memories the first one stored.
import { createEmbedder, createEngine, openNodeStore } from 'engram/node';

const path = process.env.ENGRAM_DB ?? 'memories.sqlite3';
const embedder = await createEmbedder(); // the built-in model, from the installed package
const engine = await createEngine({ store: await openNodeStore({ path }), embedder });
await engine.ready; // every stored memory has a vector for the model

if ((await engine.count()) === 0) {
  await engine.add([
    { text: 'The staging server moved to eu-west-2 in March', project: 'infra', tags: ['ops'] },
    { text: 'Grandma likes tulips and orchids in her garden', tags: ['family'] },
    { text: 'The quarterly report is due on the first Friday of July', tags: ['work'] },
  ]);
}

const query = process.argv[2] ?? 'which flowers does grandma like?';
const { hits, trace } = await engine.search(query, { k: 3 });
const stored = await engine.count();
console.log(JSON.stringify({ query, mode: trace.mode, embedder: embedder.id, stored, hits: hits.map((hit) => hit.text) }, null, 2));
await engine.close();
