/** What the SQLite store needs of a connection: the worker's wa-sqlite one and Node's better-sqlite3 one both fit. */
export type SqlValue = number | string | Uint8Array | Array<number> | bigint | null;

export interface RowReader {
  text(column: number): string;
  number(column: number): number;
  isNull(column: number): boolean;
  /** Any column, blobs copied out of the engine's memory. */
  value(column: number): SqlValue;
  /** A blob valid only until the next step: callers copy it. */
  blob(column: number): Uint8Array;
}

/** One connection; calls must not interleave (the store serialises them). Bindings are ?1, ?2, … in order. */
export interface SqlConnection {
  /** Runs one or more statements without bindings. */
  exec(sql: string): Promise<void>;
  each(sql: string, bindings: readonly SqlValue[], onRow?: (row: RowReader) => void): Promise<void>;
  run(sql: string, bindings?: readonly SqlValue[]): Promise<void>;
  /** First column of the first row, or null. */
  scalar(sql: string, bindings?: readonly SqlValue[]): Promise<SqlValue>;
  /** BEGIN IMMEDIATE … COMMIT, or ROLLBACK when `body` or the commit fails. */
  transaction<T>(body: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** The error behind the last I/O failure when the engine keeps one apart from SQLite's code (wa-sqlite VFSs). */
  lastIoError(): unknown;
  clearIoError(): void;
}

/** `run` for any connection: `each` with no row reader. */
export async function runStatement(db: Pick<SqlConnection, 'each'>, sql: string, bindings: readonly SqlValue[] = []): Promise<void> {
  await db.each(sql, bindings);
}

/** `scalar` for any connection: the first column of the first row, or null. */
export async function scalarOf(db: Pick<SqlConnection, 'each'>, sql: string, bindings: readonly SqlValue[] = []): Promise<SqlValue> {
  let value: SqlValue = null;
  let seen = false;
  await db.each(sql, bindings, (row) => {
    if (seen) return;
    seen = true;
    value = row.value(0);
  });
  return value;
}
