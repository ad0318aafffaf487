/** `timeline` on the wire: on the method allowlist the worker checks, and bounded by the read timeout. */
import { expect, it } from 'vitest';
import { timeoutFor } from '../../../src/contract/protocol.js';
import { CALLABLE_METHODS, WRITE_METHODS } from '../../../src/contract/dispatch.js';

it('timeline is a callable read', () => {
  expect(CALLABLE_METHODS.has('timeline')).toBe(true);
  expect(WRITE_METHODS.has('timeline')).toBe(false);
  expect(timeoutFor('timeline', { callMs: 111, writeMs: 222, openMs: 333 })).toBe(111);
});
