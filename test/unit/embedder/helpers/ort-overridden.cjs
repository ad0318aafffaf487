// What an app's npm `overrides: { "onnxruntime-node": "npm:onnxruntime-common@…" }` does: the package named
// onnxruntime-node is onnxruntime-common (no native backend). Preloaded with --require by node-wasm.test.ts.
const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return resolve.call(this, request === 'onnxruntime-node' ? 'onnxruntime-common' : request, ...rest);
};
