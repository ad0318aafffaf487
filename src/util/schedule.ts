/**
 * Resolves in a new task, after messages already queued. Long work (a model run, hashing every text for a
 * snapshot) does not yield to the event loop by itself, so it awaits this between slices: in the worker, searches
 * and other calls get a turn meanwhile.
 */
export function nextTask(): Promise<void> {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => {
    // Browsers: a message, unlike setTimeout(0), is not clamped to 4 ms.
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
