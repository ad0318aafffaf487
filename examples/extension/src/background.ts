/**
 * Chrome's service worker (Firefox runs src/event-page.ts instead): it cannot start a Worker, import() code or open
 * OPFS sync access handles, so it cannot run Engram. It creates an offscreen document that does, whenever none is
 * open, and relays the popup's requests to it.
 */
import { isFor, replyError, type Envelope, type Reply, type Request } from './messages.js';

const OFFSCREEN_PATH = 'offscreen.html';
let creating: Promise<void> | null = null;

/** Creates the offscreen document unless it is open. Chrome may have closed it since the last request. */
async function ensureOffscreenDocument(): Promise<void> {
  const open = await chrome.runtime.getContexts({
    contextTypes: [chrome.runtime.ContextType.OFFSCREEN_DOCUMENT],
    documentUrls: [chrome.runtime.getURL(OFFSCREEN_PATH)],
  });
  if (open.length > 0) return;
  // Two requests at once must not both create it: the second waits for the first.
  creating ??= chrome.offscreen
    .createDocument({
      url: OFFSCREEN_PATH,
      reasons: [chrome.offscreen.Reason.WORKERS],
      justification: 'Runs the Engram worker: SQLite on OPFS and the embedding model',
    })
    .catch((error: unknown) => {
      // Chrome allows one offscreen document; one made since the check (by another request) serves as well.
      if (!String(error).includes('single offscreen document')) throw error;
    })
    .finally(() => {
      creating = null;
    });
  await creating;
}

async function relay(request: Request): Promise<Reply<unknown>> {
  for (let attempt = 1; ; attempt++) {
    await ensureOffscreenDocument();
    try {
      const envelope: Envelope = { target: 'offscreen', request };
      const reply = (await chrome.runtime.sendMessage(envelope)) as Reply<unknown> | undefined;
      return reply ?? { ok: false, error: replyError('the offscreen document gave no answer') };
    } catch (error) {
      // The document closed after the check, or its script has not added its listener yet: try again.
      if (attempt === 5 || !String(error).includes('Receiving end does not exist')) throw error;
      await new Promise((done) => setTimeout(done, 100 * attempt));
    }
  }
}

chrome.runtime.onMessage.addListener((message: unknown, sender, sendResponse: (reply: Reply<unknown>) => void) => {
  if (!isFor('background', message, sender)) return false;
  relay(message.request).then(sendResponse, (error: unknown) => {
    sendResponse({ ok: false, error: replyError(error) });
  });
  return true; // answers asynchronously
});

// Start the model loading early, so the first search is likelier to be hybrid.
chrome.runtime.onStartup.addListener(() => void ensureOffscreenDocument());
chrome.runtime.onInstalled.addListener(() => void ensureOffscreenDocument());
