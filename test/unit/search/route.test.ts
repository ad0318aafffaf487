import { describe, expect, it } from 'vitest';
import { isIdentifierQuery, route } from '../../../src/search/route.js';

describe('route', () => {
  it('recognises identifier-like single tokens', () => {
    for (const q of ['src/auth/middleware.ts', 'C:\\Users\\me', 'a1b2c3d4e5', 'deadbeef42', 'ERR_CONNECTION_RESET', 'E0308', 'v1.2.3', 'package.json', 'Foo::bar', 'issue#42', 'user@example.com', ' useState2 ']) {
      expect(isIdentifierQuery(q), q).toBe(true);
    }
    for (const q of ['hello', 'auth-middleware', 'fix the auth bug', 'deadbeef', 'ab', 'src / auth', "don't", '', 'Café']) {
      expect(isIdentifierQuery(q), q).toBe(false);
    }
  });

  const hybrid = { embedder: 'e', vectorsReady: true };
  it('auto: hybrid with an embedder, lexical for identifiers, without embedder, or while vectors are built', () => {
    expect(route('why did the deploy fail', 'auto', hybrid).mode).toBe('hybrid');
    expect(route('ERR_CONNECTION_RESET', 'auto', hybrid)).toEqual({ mode: 'lexical', note: 'identifier-like query: lexical' });
    expect(route('why', 'auto', { embedder: null, vectorsReady: true })).toEqual({ mode: 'lexical', note: 'no embedder: lexical only' });
    const building = route('why', 'auto', { embedder: 'e', vectorsReady: false });
    expect(building.mode).toBe('lexical');
    expect(building.note).toContain('still being built');
  });

  it('obeys an explicit mode when it can, falls back to lexical when it cannot', () => {
    expect(route('ERR_X', 'vector', hybrid).mode).toBe('vector');
    expect(route('words', 'hybrid', hybrid).mode).toBe('hybrid');
    expect(route('words', 'lexical', hybrid).mode).toBe('lexical');
    expect(route('words', 'vector', { embedder: null, vectorsReady: true }).mode).toBe('lexical');
    expect(route('   ', 'vector', hybrid)).toEqual({ mode: 'lexical', note: 'empty query: nothing to search for' });
  });
});
