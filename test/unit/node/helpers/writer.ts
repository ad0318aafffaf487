/** Child process of file-store.test.ts: opens a file, adds memories one write each, acknowledges each to the parent. */
import { createEngine, openNodeStore } from '../../../../src/node.js';

const [path, count, holdMs] = process.argv.slice(2) as [string, string, string];
const send = (message: unknown) => new Promise<void>((done) => process.send!(message, () => done()));
try {
  const engine = await createEngine({ store: await openNodeStore({ path }) });
  for (let i = 0; i < Number(count); i++) {
    const [id] = await engine.add({ text: `memory ${i} of process ${process.pid}` });
    await send({ ack: id });
  }
  await new Promise((r) => setTimeout(r, Number(holdMs)));
  await engine.close();
} catch (error) {
  const { code = 'UNKNOWN', message = String(error) } = error as { code?: string; message?: string };
  await send({ error: { code, message } });
}
process.disconnect();
