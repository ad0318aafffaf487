// The README's quick start, as written.
import { createMemory, isEngramError } from 'engram';
// The encrypted vault beside the notes: its own module, so the quick start above stays as the README has it.
import './vault';

const status = document.querySelector<HTMLParagraphElement>('#status')!;
const mode = document.querySelector<HTMLParagraphElement>('#mode')!;
const list = document.querySelector<HTMLOListElement>('#hits')!;

try {
  const memory = await createMemory({ name: 'notes' });
  status.textContent = `ready: ${await memory.count()} memories`;
  document.body.dataset.state = 'ready';

  document.querySelector<HTMLFormElement>('#add')!.addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const text = new FormData(form).get('text');
    if (typeof text !== 'string' || text.trim() === '') return;
    await memory.add({ text, tags: ['note'] });
    form.reset();
    status.textContent = `ready: ${await memory.count()} memories`;
  });

  document.querySelector<HTMLFormElement>('#search')!.addEventListener('submit', async (event) => {
    event.preventDefault();
    const query = new FormData(event.currentTarget as HTMLFormElement).get('query');
    if (typeof query !== 'string') return;
    const { hits, trace } = await memory.search(query, { k: 5 });
    mode.textContent = trace.mode;
    list.replaceChildren(...hits.map((hit) => Object.assign(document.createElement('li'), { textContent: hit.text })));
  });
} catch (error) {
  status.textContent = isEngramError(error) ? `${error.code}: ${error.message}` : String(error);
  document.body.dataset.state = 'failed';
}
