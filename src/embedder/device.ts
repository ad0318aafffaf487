/**
 * Which device runs the model in a browser. WebGPU is used only when an adapter exists AND a short calibration shows
 * its vectors agree with WASM's (a fast but wrong GPU result would be mixed into stored vectors) and it is faster for
 * this model: for small models WASM often wins (transformers.js #1750, gpuweb #5291), so assuming
 * WebGPU is faster is the common mistake. The decision is remembered in IndexedDB (per origin by construction; the
 * key names the model, dtype, browser and GPU), because localStorage does not exist in the worker we run in.
 */
import type { ActiveDevice, DeviceChoice, EmbedderDevice, EmbedderProgress } from './options.js';
import type { LoadedModel } from './runtime.js';
import { committed, withRecords } from '../util/idb.js';

/** Fixed, mixed-length English: the same work on both devices, close to what a memory store embeds. */
export const CALIBRATION_TEXTS = [
  'Remember that the user prefers dark mode in every editor.',
  'The quarterly report is due on Friday and still needs the revenue table.',
  'Alice moved to Lisbon in March and started a new job at a design studio.',
  'Fix the flaky login test before the release branch is cut.',
  'My sister loves hiking in the mountains, especially in early autumn when the trails are quiet.',
  'Ordered a new keyboard.',
  'The meeting with the landlord about the broken heating was moved to next Tuesday afternoon.',
  'We decided to use SQLite in the browser because the data must stay on the device and work offline.',
];

/** WebGPU must beat WASM by this factor: on a tie WASM wins, it has no device to lose and no shaders to compile. */
const WEBGPU_MARGIN = 0.9;
const TIMED_RUNS = 3;
/** Each calibration text's WebGPU vector must have at least this cosine to its WASM vector (dtypes may differ). */
export const AGREEMENT = 0.99;

function pickFaster(timings: { wasm: number; webgpu: number }): ActiveDevice {
  return timings.webgpu < timings.wasm * WEBGPU_MARGIN ? 'webgpu' : 'wasm';
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** The lowest cosine between two lists of unit vectors, text by text (a zero vector agrees only with zeros). */
export function minCosine(a: readonly Float32Array[], b: readonly Float32Array[]): number {
  let min = 1;
  a.forEach((x, i) => {
    const y = b[i] as Float32Array;
    let dot = 0;
    let xx = 0;
    let yy = 0;
    for (let d = 0; d < x.length; d++) {
      dot += (x[d] as number) * (y[d] as number);
      xx += (x[d] as number) ** 2;
      yy += (y[d] as number) ** 2;
    }
    const cosine = xx === 0 && yy === 0 ? 1 : xx === 0 || yy === 0 || y.length !== x.length ? 0 : dot / Math.sqrt(xx * yy);
    min = Math.min(min, Number.isFinite(cosine) ? cosine : -1);
  });
  return min;
}

export interface Calibration {
  /** Median milliseconds per calibration batch. */
  timings: { wasm: number; webgpu: number };
  /** The lowest per-text cosine between the two devices' vectors, as documents and as queries. */
  minCosine: number;
}

/**
 * Both devices embed the calibration texts as documents and as queries (the prompts differ), and their vectors are
 * compared; then timed runs alternate between devices, so background load hits both alike.
 */
export async function calibrate(wasm: LoadedModel, webgpu: LoadedModel): Promise<Calibration> {
  const times: Record<'wasm' | 'webgpu', number[]> = { wasm: [], webgpu: [] };
  let agreement = 1;
  for (const role of ['document', 'query'] as const) {
    agreement = Math.min(agreement, minCosine(await wasm.embedBatch(CALIBRATION_TEXTS, role), await webgpu.embedBatch(CALIBRATION_TEXTS, role)));
  }
  if (!(agreement >= AGREEMENT)) return { timings: { wasm: NaN, webgpu: NaN }, minCosine: agreement };
  for (let run = 0; run < TIMED_RUNS; run++) {
    for (const [name, model] of [['wasm', wasm], ['webgpu', webgpu]] as const) {
      const started = performance.now();
      await model.embedBatch(CALIBRATION_TEXTS);
      times[name].push(performance.now() - started);
    }
  }
  return { timings: { wasm: median(times.wasm), webgpu: median(times.webgpu) }, minCosine: agreement };
}

interface GpuAdapterLike {
  info?: { vendor?: string; architecture?: string; device?: string; description?: string };
  features?: { has(feature: string): boolean };
  requestDevice(): Promise<{ destroy(): void }>;
}

type WebgpuProbe =
  /** No adapter: no flag, blocklisted GPU, or no WebGPU API at all. */
  | { adapter: null }
  /**
   * `adapter` names the GPU; `error` says why a device could not be created on it. `shaderF16`: the adapter offers
   * WGSL's f16, without which ONNX Runtime cannot run a float16 kernel (SwiftShader has none).
   */
  | { adapter: string; shaderF16: boolean; error?: string };

/**
 * Looks for an adapter and creates (and destroys) a device on it. The device check matters: when device creation
 * fails inside ONNX Runtime, session creation never settles (onnxruntime-web 1.31), and transformers.js's load
 * chain waits on it forever, so we must not hand it a GPU that cannot give us a device.
 */
async function probeWebgpu(): Promise<WebgpuProbe> {
  const gpu = (globalThis.navigator as { gpu?: { requestAdapter(): Promise<GpuAdapterLike | null> } } | undefined)?.gpu;
  if (!gpu) return { adapter: null };
  let adapter: GpuAdapterLike | null;
  try {
    adapter = await gpu.requestAdapter();
  } catch {
    return { adapter: null };
  }
  if (!adapter) return { adapter: null };
  const info = adapter.info ?? {};
  const key = [info.vendor, info.architecture, info.device, info.description].map((part) => part ?? '').join('/');
  const shaderF16 = adapter.features?.has('shader-f16') === true;
  try {
    (await adapter.requestDevice()).destroy();
    return { adapter: key, shaderF16 };
  } catch (error) {
    return { adapter: key, shaderF16, error: `WebGPU device creation failed: ${errorText(error)}` };
  }
}

const DB_NAME = 'engram-embedder';
const STORE = 'device-choice';

/**
 * One request against the decisions store, opened per use (two calls per embedder load). It settles when the
 * transaction commits, not when the request succeeds: a write is committed only then, and a worker ended in between
 * (as an app may end it right after its first answer) would lose it.
 */
function withStore<T>(mode: IDBTransactionMode, operate: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  return withRecords(DB_NAME, STORE, async (db) => {
    const transaction = db.transaction(STORE, mode);
    const request = operate(transaction.objectStore(STORE));
    await committed(transaction);
    return request.result;
  });
}

/** Remembered choice, or undefined (also when IndexedDB is unavailable: we then simply calibrate again). */
async function recallChoice(key: string): Promise<DeviceChoice | undefined> {
  try {
    return (await withStore('readonly', (store) => store.get(key))) as DeviceChoice | undefined;
  } catch {
    return undefined;
  }
}

export async function rememberChoice(key: string, choice: DeviceChoice): Promise<void> {
  try {
    await withStore('readwrite', (store) => store.put(choice, key));
  } catch {
    // Not remembering only costs a calibration next time.
  }
}

interface BrowserDeviceRequest {
  requested: EmbedderDevice;
  /** Model and dtype: together with the browser and adapter they key the remembered decision. */
  modelKey: string;
  remember: boolean;
  /** `shaderF16` is the WebGPU adapter's, for a WebGPU load (it decides whether fp16 can run there). */
  load(device: ActiveDevice, shaderF16?: boolean): Promise<LoadedModel>;
  onProgress?: (progress: EmbedderProgress) => void;
}

export interface BrowserDeviceResult {
  model: LoadedModel;
  choice: DeviceChoice;
  /** Where to record a later WebGPU failure, when the choice was automatic and remembered. */
  memoryKey?: string;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export async function chooseBrowserDevice(request: BrowserDeviceRequest): Promise<BrowserDeviceResult> {
  const result = await decide(request);
  request.onProgress?.({ status: 'device', device: result.choice.device, reason: result.choice.reason });
  return result;
}

async function decide(request: BrowserDeviceRequest): Promise<BrowserDeviceResult> {
  if (request.requested === 'wasm' || request.requested === 'cpu') {
    return { model: await request.load('wasm'), choice: { device: 'wasm', reason: 'requested' } };
  }
  const probe = await probeWebgpu();
  if (probe.adapter === null) return { model: await request.load('wasm'), choice: { device: 'wasm', reason: 'no-webgpu' } };

  const automatic = request.requested === 'auto';
  const loadWebgpu = () => request.load('webgpu', probe.shaderF16);
  const memoryKey = automatic && request.remember ? `${request.modelKey}|${probe.adapter}|${globalThis.navigator?.userAgent ?? ''}` : undefined;
  /** WebGPU failed to load or calibrate: WASM from here on, and (when automatic) remembered so. */
  const failOver = async (error: unknown, wasm?: LoadedModel): Promise<BrowserDeviceResult> => {
    const choice: DeviceChoice = { device: 'wasm', reason: 'webgpu-failed', error: errorText(error), shaderF16: probe.shaderF16 };
    if (memoryKey) await rememberChoice(memoryKey, choice);
    return { model: wasm ?? (await request.load('wasm')), choice, memoryKey };
  };
  if (probe.error !== undefined) return failOver(probe.error);

  const remembered = memoryKey ? await recallChoice(memoryKey) : undefined;
  if (!automatic || remembered) {
    const choice: DeviceChoice = remembered ? { ...remembered, reason: 'remembered' } : { device: 'webgpu', reason: 'requested', shaderF16: probe.shaderF16 };
    if (choice.device === 'wasm') return { model: await request.load('wasm'), choice, memoryKey };
    try {
      return { model: await loadWebgpu(), choice, memoryKey };
    } catch (error) {
      return failOver(error);
    }
  }

  const wasm = await request.load('wasm');
  request.onProgress?.({ status: 'calibrate', device: 'webgpu' });
  let webgpu: LoadedModel | undefined;
  let calibration: Calibration;
  try {
    webgpu = await loadWebgpu();
    calibration = await calibrate(wasm, webgpu);
  } catch (error) {
    await webgpu?.dispose().catch(() => undefined);
    return failOver(error, wasm);
  }
  const agrees = calibration.minCosine >= AGREEMENT;
  const device = agrees ? pickFaster(calibration.timings) : 'wasm';
  await (device === 'webgpu' ? wasm : webgpu).dispose();
  const choice: DeviceChoice = agrees
    ? { device, reason: 'calibrated', timings: calibration.timings, minCosine: calibration.minCosine, shaderF16: probe.shaderF16 }
    : { device, reason: 'webgpu-disagrees', minCosine: calibration.minCosine, shaderF16: probe.shaderF16 };
  if (memoryKey) await rememberChoice(memoryKey, choice);
  return { model: device === 'webgpu' ? webgpu : wasm, choice, memoryKey };
}
