/**
 * The rows of one batch's transaction as a job for the replay database's writer thread
 * (writerThread.ts): each row is its statement (an index into the statements the thread was
 * sent) and its values, kept in typed-array columns (a tag, a float and a string index per value)
 * and a table of strings, each listed once, so that posting a batch costs a transfer of a few
 * buffers and its distinct strings, no object per row. The thread runs each row's statement with
 * the same values, in the order written.
 *
 * @module
 */

/** Writes one row: its values, in the order of its statement's `?`. */
export type RowSink = (...values: unknown[]) => void;

/** Makes the {@link RowSink} of an `INSERT ... VALUES (?, ...)` statement. */
export type RowSinkMaker = (sql: string) => RowSink;

/** A value's tag: SQL NULL, a number, a string, anything else (cloned as is). */
const NULL = 0;
const NUMBER = 1;
const STRING = 2;
const OTHER = 3;

/** A batch's rows as posted to the writer thread (see {@link RowJobBuilder}). */
export interface RowJob {
  /** Statements first used by this job (their indexes follow the ones sent before). */
  newStatements: string[];
  /** Number of rows; each row's statement. */
  rows: number;
  statement: Uint16Array;
  /** Values of the rows, row after row: tag, number, index into `strings` (or `others`). */
  tags: Uint8Array;
  numbers: Float64Array;
  refs: Int32Array;
  strings: string[];
  others: unknown[];
  /** Clears the previous outputs first (the run now owning them), as ReplayStore.clearOutputs. */
  clear?: { runId: number | undefined };
  /** A snapshot row written after the rows (the values of ReplayStore.saveSnapshot's insert). */
  snapshot?: unknown[];
  /** Whether the snapshot's blob is its first part, the others posted ahead of the job (snapshotParts.ts). */
  snapshotEarly?: boolean;
}

/**
 * Builds {@link RowJob}s: hands out {@link RowSink}s, and takes each batch's job.
 *
 * @example
 * ```ts
 * const b = new RowJobBuilder();
 * b.sink('INSERT INTO t(a, b) VALUES (?, ?)')(1, 'x');
 * const job = b.take(); // { rows: 1, ... }
 * ```
 */
export class RowJobBuilder {
  private readonly statements = new Map<string, number>();
  private newStatements: string[] = [];
  private rows = 0;
  private statement = new Uint16Array(1024);
  private cells = 0;
  private tags = new Uint8Array(8192);
  private numbers = new Float64Array(8192);
  private refs = new Int32Array(8192);
  private strings: string[] = [];
  /** Where each string of the job is in `strings`: each listed once (most are a pair's assets, again and again). */
  private stringAt = new Map<string, number>();
  private others: unknown[] = [];

  /** The sink of statement `sql` (the same statement, the same index in every job). */
  sink(sql: string): RowSink {
    return (...values: unknown[]) => this.row(this.statementOf(sql), values);
  }

  private statementOf(sql: string): number {
    let i = this.statements.get(sql);
    if (i === undefined) {
      i = this.statements.size;
      this.statements.set(sql, i);
      this.newStatements.push(sql);
    }
    return i;
  }

  private row(stmt: number, values: unknown[]): void {
    if (this.rows === this.statement.length) this.statement = grown(this.statement, this.rows);
    this.statement[this.rows++] = stmt;
    const need = this.cells + values.length;
    if (need > this.tags.length) {
      const n = Math.max(need, 2 * this.tags.length);
      this.tags = grown(this.tags, n);
      this.numbers = grown(this.numbers, n);
      this.refs = grown(this.refs, n);
    }
    for (const v of values) {
      const c = this.cells++;
      if (typeof v === 'number') {
        this.tags[c] = NUMBER;
        this.numbers[c] = v;
      } else if (typeof v === 'string') {
        this.tags[c] = STRING;
        let at = this.stringAt.get(v);
        if (at === undefined) {
          at = this.strings.push(v) - 1;
          this.stringAt.set(v, at);
        }
        this.refs[c] = at;
      } else if (v === null || v === undefined) this.tags[c] = NULL;
      else {
        this.tags[c] = OTHER;
        this.refs[c] = this.others.push(v) - 1;
      }
    }
  }

  /** The job of the rows written since the last one (its buffers are the job's: new ones follow). */
  take(): RowJob {
    const job: RowJob = {
      newStatements: this.newStatements,
      rows: this.rows,
      statement: this.statement.slice(0, this.rows),
      tags: this.tags.slice(0, this.cells),
      numbers: this.numbers.slice(0, this.cells),
      refs: this.refs.slice(0, this.cells),
      strings: this.strings,
      others: this.others,
    };
    this.newStatements = [];
    this.drop();
    return job;
  }

  /** Forgets the rows written since the last job (their transaction rolled back), statements first used by them included. */
  drop(): void {
    for (const sql of this.newStatements) this.statements.delete(sql);
    this.newStatements = [];
    this.rows = 0;
    this.cells = 0;
    this.strings = [];
    this.stringAt = new Map();
    this.others = [];
  }
}

/** A copy of `a` with room for `n` elements (at least twice as long). */
function grown<T extends Uint8Array | Uint16Array | Int32Array | Float64Array>(a: T, n: number): T {
  const b = new (a.constructor as new (n: number) => T)(Math.max(n + 1, 2 * a.length));
  b.set(a);
  return b;
}

/**
 * The buffers of a job, for the transfer list of its message: its columns, the whole buffers of
 * its typed-array values (a BLOB made for the row, as own-metric chunks are; never a Buffer, which
 * may share a pool or be the caller's), and its snapshot's blob (made for the job: megabytes for a
 * dense log) when it owns its memory.
 */
export function rowJobTransfer(job: RowJob): ArrayBuffer[] {
  const out = new Set([job.statement.buffer, job.tags.buffer, job.numbers.buffer, job.refs.buffer] as ArrayBuffer[]);
  for (const v of job.others) if (v instanceof Uint8Array && !Buffer.isBuffer(v) && ownsItsMemory(v)) out.add(v.buffer);
  const blob = job.snapshot?.[6];
  if (blob instanceof Uint8Array && (ownsItsMemory(blob) || isMarkedTransferable(blob))) out.add(blob.buffer as ArrayBuffer);
  return [...out];
}

/** ArrayBuffers made to be handed to a job whole, though a view of them may not reach their end. */
const made = new WeakSet<ArrayBuffer>();

/**
 * Marks `ab` as made for a job (a snapshot's blob, written into a buffer sized for its largest
 * possible size, snapshotBlob.ts): a view of it from its start moves to the writer thread rather
 * than being copied.
 */
export function markTransferable(ab: ArrayBuffer): void {
  made.add(ab);
}

/** Whether `v` is a view, from its start, of a buffer marked by {@link markTransferable}. */
export function isMarkedTransferable(v: Uint8Array): boolean {
  return v.byteOffset === 0 && v.buffer instanceof ArrayBuffer && made.has(v.buffer);
}

/**
 * Whether `v` is the whole of its ArrayBuffer, which can then be transferred to another thread
 * (a slice of a larger buffer, Node's shared pool of small Buffers for one, cannot).
 */
function ownsItsMemory(v: Uint8Array): v is Uint8Array<ArrayBuffer> {
  return v.byteOffset === 0 && v.byteLength === v.buffer.byteLength && v.buffer instanceof ArrayBuffer;
}

/**
 * Runs each row of `job` with `run(statement, values)`, in order.
 *
 * @example
 * ```ts
 * forEachRow(job, (i, values) => stmts[i].run(...values));
 * ```
 */
export function forEachRow(job: RowJob, run: (statement: number, values: unknown[]) => void, columns: (statement: number) => number): void {
  let c = 0;
  for (let r = 0; r < job.rows; r++) {
    const s = job.statement[r];
    const n = columns(s);
    const values = new Array<unknown>(n);
    for (let k = 0; k < n; k++, c++) {
      const tag = job.tags[c];
      values[k] =
        tag === NUMBER ? job.numbers[c] : tag === STRING ? job.strings[job.refs[c]] : tag === OTHER ? job.others[job.refs[c]] : null;
    }
    run(s, values);
  }
}

/**
 * The statement inserting `k` rows at once of `sql`, a statement inserting one row of parameters
 * (`INSERT ... VALUES (?, ..., ?)`): its tuple of parameters repeated `k` times. Undefined for a
 * statement of another shape (a tuple with a literal, an `INSERT ... SELECT`, an upsert clause).
 *
 * @example
 * ```ts
 * multiRowSql('INSERT INTO t(a, b) VALUES (?, ?)', 2); // 'INSERT INTO t(a, b) VALUES (?, ?), (?, ?)'
 * ```
 */
export function multiRowSql(sql: string, k: number): string | undefined {
  const m = /^(\s*INSERT\b[\s\S]*\bVALUES\s*)(\((?:\s*\?\s*,)*\s*\?\s*\))\s*$/i.exec(sql);
  return m ? m[1] + Array(k).fill(m[2]).join(', ') : undefined;
}
