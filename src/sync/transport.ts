/** Where sync objects go: any key/value object storage. s3.ts implements it on the S3 API (S3, R2, MinIO, B2). */
export interface TransportCall {
  /** Aborts the request (sync's per-request timeout, or `close()`); a transport that ignores it is raced instead. */
  signal?: AbortSignal;
  /** Called as a body arrives (each chunk): the request timeout counts from the last progress, so a large object on a slow link is not cut. */
  progress?: () => void;
}

export interface SyncTransport {
  /** Every key starting with `prefix`, in any order. */
  list(prefix: string, call?: TransportCall): Promise<string[]>;
  /** The object's bytes, or null when there is none; an object over `maxBytes` is refused (SYNC_FAILED, details.tooLarge) unread. */
  get(key: string, call?: TransportCall & { maxBytes?: number }): Promise<Uint8Array | null>;
  /**
   * `ifAbsent`: write only when no object has the name (S3 `If-None-Match: *`); a taken name is SYNC_FAILED with
   * details.taken. A storage that ignores the condition overwrites, which sync checks for before (sync.ts push).
   */
  put(key: string, bytes: Uint8Array, call?: TransportCall & { ifAbsent?: boolean }): Promise<void>;
  delete?(key: string, call?: TransportCall): Promise<void>;
}
