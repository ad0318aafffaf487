/**
 * Browser-only ONNX Runtime glue, imported lazily by `runtime.ts` so Node never loads it.
 *
 * 1. The environment, where `runtime.ts` removes transformers.js's CDN paths for the WASM files: ONNX Runtime then
 *    loads them through its own `new URL(file, import.meta.url)`, which the app's bundler emits with the app.
 *
 * 2. A guard for a transformers.js 4.3 bug. In the browser it serialises every session creation and every run on one
 *    promise chain (`chain = chain.then(run)`), so a single rejection poisons the chain: every later load or run in
 *    the page rejects with that same error without running. A WebGPU failure would then take WASM down with it, and a
 *    broken custom model would break the built-in one. So, while one of our loads runs, session creation never
 *    rejects (a failed session is returned as a marked stub) and our sessions' `run` never rejects (the error is
 *    kept on the session). `runtime.ts` rethrows both outside the chain. The guard is on only during our own loads
 *    (which transformers.js serialises anyway), so other ONNX Runtime users in the page keep its normal behaviour.
 */
import * as ort from 'onnxruntime-web/webgpu';

export const ortEnv = ort.env;

const LOAD_ERROR = Symbol('engram.loadError');
const RUN_ERROR = Symbol('engram.runError');

type Session = ort.InferenceSession & { [RUN_ERROR]?: unknown };
type FailedSession = { [LOAD_ERROR]: unknown; inputNames: string[]; outputNames: string[]; release(): Promise<void> };

let guardedLoads = 0;
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const create = ort.InferenceSession.create.bind(ort.InferenceSession) as (...args: unknown[]) => Promise<Session>;
  const guardedCreate = async (...args: unknown[]): Promise<Session | FailedSession> => {
    if (guardedLoads === 0) return create(...args);
    try {
      return keepRunErrors(await create(...args));
    } catch (error) {
      return { [LOAD_ERROR]: error, inputNames: [], outputNames: [], release: async () => {} };
    }
  };
  (ort.InferenceSession as { create: unknown }).create = guardedCreate;
}

function keepRunErrors(session: Session): Session {
  const run = session.run.bind(session);
  session.run = ((...args: Parameters<typeof run>) =>
    run(...args).catch((error: unknown) => {
      session[RUN_ERROR] = error;
      // An empty result makes transformers.js fail after the chain, where we look for RUN_ERROR.
      return {};
    })) as typeof session.run;
  return session;
}

/** Runs a transformers.js load with the guard on; any session that failed to create is rethrown here. */
export async function guardedLoad<T>(load: () => Promise<T>, sessionsOf: (loaded: T) => Record<string, unknown>): Promise<T> {
  install();
  guardedLoads++;
  let loaded: T;
  try {
    loaded = await load();
  } finally {
    guardedLoads--;
  }
  for (const session of Object.values(sessionsOf(loaded))) {
    if (session && typeof session === 'object' && LOAD_ERROR in session) throw (session as FailedSession)[LOAD_ERROR];
  }
  return loaded;
}

/** The real error behind a failed run of one of our sessions (and clears it), or undefined. */
export function takeRunError(sessions: Record<string, unknown>): unknown {
  for (const session of Object.values(sessions) as Session[]) {
    if (session && RUN_ERROR in session) {
      const error = session[RUN_ERROR];
      delete session[RUN_ERROR];
      return error;
    }
  }
  return undefined;
}
