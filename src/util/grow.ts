type Growable = Float32Array | Float64Array | Int32Array | Uint16Array | Uint8Array;

/** A copy of `old` with room for `length` elements (the rest zero): a typed array's amortised growth. */
export function grown<T extends Growable>(old: T, length: number): T {
  const next = new (old.constructor as new (length: number) => T)(length);
  next.set(old);
  return next;
}
