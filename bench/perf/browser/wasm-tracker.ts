/**
 * Bench-only, first import of the worker in the bench's server (bench/perf/browser-server.ts): remembers every
 * WebAssembly memory the worker creates or instantiates, so the million section can add their size to the
 * worker's heap (CDP's Runtime.getHeapUsage leaves WebAssembly memory out, and Runtime.queryObjects crashed the
 * renderer on the real worker). The driver reads `globalThis.__engramBenchWasmBytes()` through CDP.
 */
const memories = new Set<WebAssembly.Memory>();

function track(instance: WebAssembly.Instance): void {
  for (const value of Object.values(instance.exports)) if (value instanceof WebAssembly.Memory) memories.add(value);
}

type Instantiated = WebAssembly.WebAssemblyInstantiatedSource | WebAssembly.Instance;
const trackResult = <T extends Instantiated>(result: T): T => {
  track(result instanceof WebAssembly.Instance ? result : result.instance);
  return result;
};

const wasm = WebAssembly as unknown as Record<string, unknown>;
const instantiate = WebAssembly.instantiate.bind(WebAssembly) as (...args: unknown[]) => Promise<Instantiated>;
wasm.instantiate = (...args: unknown[]) => instantiate(...args).then(trackResult);
if (typeof WebAssembly.instantiateStreaming === 'function') {
  const streaming = WebAssembly.instantiateStreaming.bind(WebAssembly) as (...args: unknown[]) => Promise<Instantiated>;
  wasm.instantiateStreaming = (...args: unknown[]) => streaming(...args).then(trackResult);
}
wasm.Instance = new Proxy(WebAssembly.Instance, {
  construct(target, args, newTarget) {
    return trackResult(Reflect.construct(target, args, newTarget) as WebAssembly.Instance);
  },
});
wasm.Memory = new Proxy(WebAssembly.Memory, {
  construct(target, args, newTarget) {
    const memory = Reflect.construct(target, args, newTarget) as WebAssembly.Memory;
    memories.add(memory);
    return memory;
  },
});

(globalThis as unknown as { __engramBenchWasmBytes: () => number }).__engramBenchWasmBytes = () =>
  [...memories].reduce((sum, memory) => sum + memory.buffer.byteLength, 0);

export {};
