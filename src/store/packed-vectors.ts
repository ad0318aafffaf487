import { EngramError, ErrorCode } from '../errors.js';
import type { PackedVectors } from './store.js';

/**
 * The one check of a vectors block, made by every store before it changes anything. A block whose size is not
 * ids × dim is DIMENSION_MISMATCH, as a vector of the wrong length from an embedder is; a block without a vector
 * space or with a dim that is not a positive integer is STORE_FAILED.
 */
export function checkPackedVectors(vectors: PackedVectors): void {
  const { vectorSpace, dim, ids, data } = vectors;
  if (typeof vectorSpace !== 'string' || vectorSpace === '' || !Number.isInteger(dim) || dim <= 0) {
    throw new EngramError(ErrorCode.STORE_FAILED, 'vectors need a vector space and a positive integer dim');
  }
  if (!(data instanceof Float32Array) || data.length !== ids.length * dim) {
    throw new EngramError(ErrorCode.DIMENSION_MISMATCH, `vectors: ${ids.length} ids × dim ${dim} needs ${ids.length * dim} floats, got ${data?.length}`);
  }
}
