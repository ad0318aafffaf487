/**
 * The offscreen document: a hidden extension page, the only place in an MV3 extension that can start the Engram
 * worker. It answers the requests the service worker relays.
 */
import { createMemory, isEngramError, type Memory } from 'engram';
import { isFor, replyError, type Answers, type Reply, type Request } from './messages.js';

let opening: Promise<Memory> | null = null;

/** Opens the memory once; after a failure the next request tries again. */
function memory(): Promise<Memory> {
  opening ??= createMemory({ name: 'page-notes' }).catch((error: unknown) => {
    opening = null;
    throw error;
  });
  return opening;
}

async function answer(request: Request): Promise<Answers[Request['type']]> {
  const notes = await memory();
  switch (request.type) {
    case 'add': {
      const [id] = await notes.add({
        text: `${request.title}: ${request.note}`,
        tags: ['page-note'],
        meta: { title: request.title, url: request.url },
      });
      return { id: id!, count: await notes.count() };
    }
    case 'search': {
      const { hits, trace } = await notes.search(request.query, { k: request.k });
      return {
        mode: trace.mode,
        hits: hits.map((hit) => ({ id: hit.id, text: hit.text })),
      };
    }
    case 'status':
      return notes.status();
  }
}


// Added before the memory opens, so requests relayed right after the document loads are not lost.
chrome.runtime.onMessage.addListener((message: unknown, _sender, sendResponse: (reply: Reply<unknown>) => void) => {
  if (!isFor('offscreen', message)) return false;
  answer(message.request).then(
    (value) => sendResponse({ ok: true, value }),
    (error: unknown) => sendResponse({ ok: false, error: replyError(error, isEngramError(error) ? error.code : null) }),
  );
  return true;
});

void memory().catch(() => undefined); // start loading now; a failure is reported to the next request
