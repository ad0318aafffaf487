/** Where sync objects go: any key/value object storage. s3.ts implements it on the S3 API (S3, R2, MinIO, B2). */
export interface SyncTransport {
  /** Every key starting with `prefix`, in any order. */
  list(prefix: string): Promise<string[]>;
  /** The object's bytes, or null when there is none. */
  get(key: string): Promise<Uint8Array | null>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete?(key: string): Promise<void>;
}
