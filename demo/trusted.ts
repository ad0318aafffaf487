/**
 * Trusted Types for the demo. index.html's CSP sets `require-trusted-types-for 'script'` and allows one policy,
 * `engram-demo`, which mints exactly one value: the URL of the Engram worker. The page renders memories with
 * DOM APIs only, so it has no HTML or script policy at all: any `innerHTML = string` or `eval` is refused by
 * the browser. (A policy named `default` would be consulted for every sink; the demo keeps none.)
 */
import workerUrl from '../worker/index.ts?worker&url';

const POLICY_NAME = 'engram-demo';

/** The slice of the Trusted Types API the demo uses (TypeScript's DOM lib does not declare it yet). */
interface ScriptUrlPolicy {
  createScriptURL(input: string): object;
}
interface TrustedTypeFactory {
  createPolicy(name: string, rules: { createScriptURL(input: string): string }): ScriptUrlPolicy;
}

let policy: ScriptUrlPolicy | null | undefined;

/** The policy, created once (a second `createPolicy` with the same name is refused by the CSP); null without Trusted Types. */
function scriptUrlPolicy(): ScriptUrlPolicy | null {
  if (policy !== undefined) return policy;
  const factory = (globalThis as { trustedTypes?: TrustedTypeFactory }).trustedTypes;
  const expected = new URL(workerUrl, location.href).href;
  policy =
    factory?.createPolicy(POLICY_NAME, {
      createScriptURL(input) {
        if (new URL(input, location.href).href !== expected) throw new TypeError(`${POLICY_NAME}: refusing script URL ${input}`);
        return input;
      },
    }) ?? null;
  return policy;
}

/**
 * Spawns the Engram worker for `createMemory({ worker })`. `createMemory`'s own spawn passes a plain URL to
 * `new Worker`, which the demo's CSP refuses; Vite's `?worker&url` gives the same worker bundle's URL in dev and build.
 */
export function spawnEngramWorker(name: string): Worker {
  const trusted = scriptUrlPolicy();
  // The Worker constructor takes a TrustedScriptURL where Trusted Types exist; TypeScript only knows string | URL.
  const url = (trusted ? trusted.createScriptURL(workerUrl) : workerUrl) as string;
  return new Worker(url, { type: 'module', name: `engram:${name}` });
}
