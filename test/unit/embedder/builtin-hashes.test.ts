import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUILTIN_MODEL_FILES, BUILTIN_MODEL_SHA256 } from '../../../src/embedder/model-files.js';

describe('the built-in model files a browser load checks', () => {
  it('are named with the hashes of the files the (deterministic) build writes', () => {
    const build = JSON.parse(readFileSync(new URL('../../../models/engram/glove-100d/engram-build.json', import.meta.url), 'utf8')) as {
      files: Record<string, { sha256: string }>;
    };
    expect(Object.keys(BUILTIN_MODEL_SHA256).sort()).toEqual(Object.keys(BUILTIN_MODEL_FILES).sort());
    for (const [file, sha256] of Object.entries(BUILTIN_MODEL_SHA256)) expect(build.files[file]?.sha256, file).toBe(sha256);
  });
});
