/**
 * Firefox's background: an event page (manifest `background.scripts`), a hidden document that can start a Worker
 * itself, so it owns the Engram worker and answers the popup directly. Firefox has no offscreen documents and
 * ignores `background.service_worker` when `scripts` is given. Firefox unloads an idle event page, and the worker
 * with it; the next message loads the page again and the memory reopens from storage.
 */
import { memory, reply } from './host.js';
import { isFor, type Reply } from './messages.js';

// Added at the top level, before the memory opens: a message that woke the page must find the listener.
chrome.runtime.onMessage.addListener((message: unknown, sender, sendResponse: (reply: Reply<unknown>) => void) => {
  if (!isFor('background', message, sender)) return false;
  void reply(message.request).then(sendResponse);
  return true;
});

void memory().catch(() => undefined); // start loading now; a failure is reported to the next request
