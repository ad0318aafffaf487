/**
 * Where a model's files are, and a cheap check that they are there before anything loads them.
 *
 * The built-in model's files are referenced as `new URL(<string literal>, import.meta.url)`: the one form that Vite,
 * webpack 5, Rollup and Parcel all turn into assets of the app's own build, served from its origin. In this
 * repository the literals point into `models/`; `npm run build` copies the same files to `dist/models/`, where the
 * same relative paths hold.
 */
import { EngramError, ErrorCode } from '../errors.js';
import type { EmbedderDtype } from './options.js';

/** File name (relative to the model folder) → URL, for models whose files are not laid out under one folder. */
export type ModelFiles = Readonly<Record<string, string>>;

/** The built-in model as shipped: its q8 weights only (the default dtype). */
export const BUILTIN_MODEL_FILES = {
  'config.json': new URL('../../models/engram/glove-100d/config.json', import.meta.url).href,
  'tokenizer.json': new URL('../../models/engram/glove-100d/tokenizer.json', import.meta.url).href,
  'tokenizer_config.json': new URL('../../models/engram/glove-100d/tokenizer_config.json', import.meta.url).href,
  'onnx/model_quantized.onnx': new URL('../../models/engram/glove-100d/onnx/model_quantized.onnx', import.meta.url).href,
} as const satisfies ModelFiles;

/**
 * SHA-256 of each shipped file of the built-in model (the build is deterministic; a unit test holds these to
 * `models/engram/glove-100d/engram-build.json`). A file served with other bytes (a tampered or stale asset) fails the
 * load with MODEL_INVALID instead of embedding wrongly.
 */
export const BUILTIN_MODEL_SHA256: Readonly<Record<keyof typeof BUILTIN_MODEL_FILES, string>> = {
  'config.json': 'fad304d5f2b734888206f55544e4f89ac96b03df3678c1acaef4adaeedb36549',
  'tokenizer.json': '983ac2fbcbd94daca4b919a605fc5fe01436e94064a55b18f5e34f89c3c71eb2',
  'tokenizer_config.json': '0f9044330809152fb4326ceeb6610fb644432e835fd8e791eb21fc6b82af2726',
  'onnx/model_quantized.onnx': 'ad20222a019a2563e466a86bd56fe344cb430a07c28f62ac192ad8bbc47e0bc5',
};

/** The ONNX file transformers.js loads for each dtype. */
const ONNX_FILE: Record<EmbedderDtype, string> = {
  fp32: 'onnx/model.onnx',
  fp16: 'onnx/model_fp16.onnx',
  q8: 'onnx/model_quantized.onnx',
  int8: 'onnx/model_int8.onnx',
  uint8: 'onnx/model_uint8.onnx',
  q4: 'onnx/model_q4.onnx',
  q4f16: 'onnx/model_q4f16.onnx',
  bnb4: 'onnx/model_bnb4.onnx',
};

export interface ModelLocation {
  model: string;
  /** Folder or URL prefix holding `<owner>/<name>/`. */
  modelPath: string;
  dtype: EmbedderDtype;
  files?: ModelFiles;
  /** SHA-256 (hex) of listed files whose bytes are known: checked as they are fetched. */
  sha256?: Readonly<Record<string, string>>;
}

/** Where one file of the model is: its explicit URL, or its place under `modelPath`, resolved against the page. */
export function modelFileUrl(location: ModelLocation, file: string): string {
  const explicit = location.files?.[file];
  if (explicit) return explicit;
  const relative = `${location.modelPath}${location.model}/${file}`;
  const base = globalThis.location?.href;
  return base ? new URL(relative, base).href : relative;
}

/**
 * Browser only: asks the server for the files a load needs (config, tokenizer, weights) without downloading them,
 * so a missing model is a MODEL_NOT_FOUND when the Memory opens rather than a quiet lexical-only search later.
 */
export async function checkModelFiles(location: ModelLocation): Promise<void> {
  const needed = ['config.json', 'tokenizer.json', ONNX_FILE[location.dtype]];
  const missing: string[] = [];
  await Promise.all(
    needed.map(async (file) => {
      const url = modelFileUrl(location, file);
      const response = await fetch(url, { method: 'HEAD' }).catch(() => null);
      if (!response?.ok || isHtmlFallback(response, file)) missing.push(url);
    }),
  );
  if (missing.length > 0) {
    throw new EngramError(ErrorCode.MODEL_NOT_FOUND, `model "${location.model}" is missing files: ${missing.join(', ')} (pass embedder: null for lexical-only search)`, {
      details: { model: location.model, missing },
    });
  }
}

/** Single-page-app servers answer unknown paths with index.html and status 200. */
function isHtmlFallback(response: Response, file: string): boolean {
  return !file.endsWith('.html') && (response.headers.get('content-type') ?? '').includes('text/html');
}

/** Where transformers.js downloads a Hub model's files from (its default `env.remoteHost` and path template). */
export function hubFileUrl(model: string, revision: string, file: string): string {
  return `https://huggingface.co/${model}/resolve/${encodeURIComponent(revision)}/${file}`;
}

/** What reading a file that a model may or may not have needs: the location, and the Hub revision when remote is allowed. */
export interface OptionalFiles extends ModelLocation {
  remoteRevision?: string;
}

/** Node's `fs`, without an import a browser bundler would have to stub. */
function nodeFs(): typeof import('node:fs') | undefined {
  const runtime = globalThis.process as { getBuiltinModule?: (id: string) => unknown } | undefined;
  return runtime?.getBuiltinModule?.('node:fs') as typeof import('node:fs') | undefined;
}

const isUrl = (path: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(path) || globalThis.location !== undefined;

/**
 * The text of a file the model may not have (the sentence-transformers configs), or null when it has none. A model
 * given as listed files has only those. A local miss is looked up on the Hub when remote loading is on.
 */
export async function readOptionalFile(location: OptionalFiles, file: string): Promise<string | null> {
  if (location.files) return location.files[file] ? fetchText(location.files[file]) : null;
  const local = modelFileUrl(location, file);
  const fs = isUrl(local) ? undefined : nodeFs();
  const text = fs ? (fs.existsSync(local) ? fs.readFileSync(local, 'utf8') : null) : await fetchText(local);
  if (text !== null || location.remoteRevision === undefined) return text;
  return fetchText(hubFileUrl(location.model, location.remoteRevision, file));
}

/** Whether the model has `file` (e.g. its fp16 weights), without downloading it. */
export async function hasModelFile(location: OptionalFiles, file: string): Promise<boolean> {
  if (location.files) return file in location.files;
  const local = modelFileUrl(location, file);
  const fs = isUrl(local) ? undefined : nodeFs();
  if (fs ? fs.existsSync(local) : await headOk(local)) return true;
  return location.remoteRevision !== undefined && headOk(hubFileUrl(location.model, location.remoteRevision, file));
}

async function fetchText(url: string): Promise<string | null> {
  const response = await fetch(url).catch(() => null);
  if (!response?.ok || isHtmlFallback(response, url)) return null;
  return response.text();
}

async function headOk(url: string): Promise<boolean> {
  const response = await fetch(url, { method: 'HEAD' }).catch(() => null);
  return response?.ok === true && !isHtmlFallback(response, url);
}
