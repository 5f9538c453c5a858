/**
 * The rows of one batch's transaction as a job for the replay database's writer thread
 * (writerThread.ts): each row is its statement (an index into the statements the thread was
 * sent) and its values, kept in typed-array columns (a tag, a float and a string index per value)
 * and a table of strings, each listed once, so that posting a batch costs a transfer of a few
 * buffers and its distinct strings, no object per row. The thread runs each row's statement with
 * the same values, in the order written, and gives the columns back ({@link RowJobBuilder.reuse}):
 * the next jobs are written into them, so a replay's jobs allocate no memory once their columns are
 * as long as its batches need. (Columns left to the thread's garbage collector waited for it: the
 * thread's heap is small and rarely collected, and the columns of some thirty jobs, 60 MB, were
 * alive at a ten-day merge's peak.)
 *
 * @module
 */

/** Writes one row: its values, in the order of its statement's `?`. */
export type RowSink = (...values: unknown[]) => void;

/** Makes the {@link RowSink} of an `INSERT ... VALUES (?, ...)` statement. */
export type RowSinkMaker = (sql: string) => RowSink;

/** A value's tag: SQL NULL, a number, a string, bytes (a BLOB), anything else (cloned as is). */
const NULL = 0;
const NUMBER = 1;
const STRING = 2;
const OTHER = 3;
const BYTES = 4;

/**
 * A job's columns: each row's statement, and the values of the rows, row after row (a tag, a
 * number, an index into the job's `strings` or `others`; bytes are copied into `bytes`, a value
 * its offset there in `refs` and its length in `numbers`). A job's are longer than its rows need:
 * what follows them is room for the next jobs written into the same columns.
 */
export interface RowColumns {
  statement: Uint16Array<ArrayBuffer>;
  tags: Uint8Array<ArrayBuffer>;
  numbers: Float64Array<ArrayBuffer>;
  refs: Int32Array<ArrayBuffer>;
  bytes: Uint8Array<ArrayBuffer>;
}

/** A batch's rows as posted to the writer thread (see {@link RowJobBuilder}): its first `rows` rows of its columns. */
export interface RowJob extends RowColumns {
  /** Statements first used by this job (their indexes follow the ones sent before). */
  newStatements: string[];
  /** Number of rows. */
  rows: number;
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
 * Columns kept for the next jobs at most: the writer thread gives back one set a job it runs, and
 * the engine's thread takes one a job it posts, so a few cover the jobs that wait for the thread.
 */
const SPARES = 4;

/**
 * Builds {@link RowJob}s: hands out {@link RowSink}s, and takes each batch's job.
 *
 * @example
 * ```ts
 * const b = new RowJobBuilder();
 * b.sink('INSERT INTO t(a, b) VALUES (?, ?)')(1, 'x');
 * const job = b.take(); // { rows: 1, ... }
 * b.reuse(job); // once the job has run: the next jobs are written into its columns
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
  private bytes = new Uint8Array(65536);
  private bytesUsed = 0;
  private strings: string[] = [];
  /** Where each string of the job is in `strings`: each listed once (most are a pair's assets, again and again). */
  private stringAt = new Map<string, number>();
  private others: unknown[] = [];
  /** Columns of jobs that have run, given back by {@link reuse}: the next jobs' (at most {@link SPARES}). */
  private spares: RowColumns[] = [];

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
      // The three are as long as each other: grown alike.
      this.tags = grown(this.tags, need);
      this.numbers = grown(this.numbers, need);
      this.refs = grown(this.refs, need);
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
      else if (v instanceof Uint8Array) {
        // Copied (a BLOB of a few kilobytes: a series' chunk): the job's bytes go back with its
        // columns, where a buffer of its own would wait for the thread's garbage collector.
        const at = this.bytesUsed;
        if (at + v.length > this.bytes.length) this.bytes = grown(this.bytes, at + v.length);
        this.bytes.set(v, at);
        this.bytesUsed = at + v.length;
        this.tags[c] = BYTES;
        this.refs[c] = at;
        this.numbers[c] = v.length;
      } else {
        this.tags[c] = OTHER;
        this.refs[c] = this.others.push(v) - 1;
      }
    }
  }

  /**
   * The job of the rows written since the last one. Its columns are the job's: the next rows are
   * written into columns given back by {@link reuse}, or into new ones as long as these.
   */
  take(): RowJob {
    const job: RowJob = {
      newStatements: this.newStatements,
      rows: this.rows,
      statement: this.statement,
      tags: this.tags,
      numbers: this.numbers,
      refs: this.refs,
      bytes: this.bytes,
      strings: this.strings,
      others: this.others,
    };
    const next = this.spares.pop() ?? {
      statement: new Uint16Array(this.statement.length),
      tags: new Uint8Array(this.tags.length),
      numbers: new Float64Array(this.numbers.length),
      refs: new Int32Array(this.refs.length),
      bytes: new Uint8Array(this.bytes.length),
    };
    this.statement = next.statement;
    this.tags = next.tags;
    this.numbers = next.numbers;
    this.refs = next.refs;
    this.bytes = next.bytes;
    this.newStatements = [];
    this.drop();
    return job;
  }

  /**
   * Gives back the columns of a job that has run (the writer thread sends them back): later jobs
   * are written into them. Beyond {@link SPARES} kept, they are dropped.
   */
  reuse(columns: RowColumns): void {
    if (this.spares.length < SPARES) this.spares.push(columns);
  }

  /** Forgets the rows written since the last job (their transaction rolled back), statements first used by them included. */
  drop(): void {
    for (const sql of this.newStatements) this.statements.delete(sql);
    this.newStatements = [];
    this.rows = 0;
    this.cells = 0;
    this.bytesUsed = 0;
    this.strings = [];
    this.stringAt = new Map();
    this.others = [];
  }
}

/**
 * A copy of `a` with room for `n` elements (at least a quarter longer: the columns of a few jobs
 * stay alive, each as long as the longest batch made it, so they grow by less than twice).
 */
function grown<T extends Uint8Array | Uint16Array | Int32Array | Float64Array>(a: T, n: number): T {
  const b = new (a.constructor as new (n: number) => T)(Math.max(n + 1, Math.ceil(1.25 * a.length)));
  b.set(a);
  return b;
}

/**
 * The buffers of a job, for the transfer list of its message: its columns, and its snapshot's blob
 * (made for the job: megabytes for a dense log) when it owns its memory.
 */
export function rowJobTransfer(job: RowJob): ArrayBuffer[] {
  const out = [...columnBuffers(job)];
  const blob = job.snapshot?.[6];
  if (blob instanceof Uint8Array && (ownsItsMemory(blob) || isMarkedTransferable(blob))) out.push(blob.buffer as ArrayBuffer);
  return out;
}

/** The buffers of a job's columns (what goes to the writer thread with the job, and comes back after it ran). */
export function columnBuffers(c: RowColumns): ArrayBuffer[] {
  return [c.statement.buffer, c.tags.buffer, c.numbers.buffer, c.refs.buffer, c.bytes.buffer];
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
        tag === NUMBER
          ? job.numbers[c]
          : tag === STRING
            ? job.strings[job.refs[c]]
            : tag === BYTES
              ? job.bytes.subarray(job.refs[c], job.refs[c] + job.numbers[c])
              : tag === OTHER
                ? job.others[job.refs[c]]
                : null;
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

/**
 * `sql`, a statement inserting rows, with `OR FAIL` as its conflict clause when it has none (a
 * plain `INSERT INTO`); undefined for one with a conflict clause of its own (`INSERT OR REPLACE`,
 * ...) or another statement.
 *
 * @example
 * ```ts
 * orFail('INSERT INTO t(a) VALUES (?)'); // 'INSERT OR FAIL INTO t(a) VALUES (?)'
 * orFail('INSERT OR REPLACE INTO t(a) VALUES (?)'); // undefined
 * ```
 */
export function orFail(sql: string): string | undefined {
  const m = /^(\s*INSERT)(\s+INTO\b[\s\S]*)$/i.exec(sql);
  return m ? `${m[1]} OR FAIL${m[2]}` : undefined;
}
