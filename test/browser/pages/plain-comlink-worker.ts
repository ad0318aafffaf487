/// <reference lib="webworker" />
// An app's own Comlink worker, unrelated to Engram: its errors must cross as Comlink always sent them.
import * as Comlink from 'comlink';

Comlink.expose({
  fail(): never {
    throw new TypeError('plain failure');
  },
});
