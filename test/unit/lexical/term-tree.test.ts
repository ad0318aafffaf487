import { describe, expect, test } from 'vitest';
import { ErrorCode } from '../../../src/errors.js';
import { termTree } from '../../../src/lexical/term-tree.js';

describe('termTree', () => {
  test('refuses terms out of order or repeated', () => {
    expect(() => termTree([['b', 1], ['a', 2]])).toThrow(/ascending/);
    expect(() => termTree([['a', 1], ['a', 2]])).toThrow(/ascending/);
    expect(() => termTree([['b', 1], ['a', 2]])).toThrow(expect.objectContaining({ name: 'EngramError', code: ErrorCode.SNAPSHOT_INVALID }));
  });
});
