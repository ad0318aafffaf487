/**
 * Chrome's offscreen document: a hidden extension page, the only place in a Chrome MV3 extension that can start the
 * Engram worker. It answers the requests the service worker relays.
 */
import { memory, reply } from './host.js';
import { isFor, type Reply } from './messages.js';

// Added before the memory opens, so requests relayed right after the document loads are not lost.
chrome.runtime.onMessage.addListener((message: unknown, sender, sendResponse: (reply: Reply<unknown>) => void) => {
  if (!isFor('offscreen', message, sender)) return false;
  void reply(message.request).then(sendResponse);
  return true;
});

void memory().catch(() => undefined); // start loading now; a failure is reported to the next request
