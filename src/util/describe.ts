/** A short description of a value for an error message: never the whole of a long string or an object. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return value.length > 40 ? `a ${value.length}-character string` : JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an invalid Date' : 'a Date';
  return Array.isArray(value) ? 'an array' : 'an object';
}
