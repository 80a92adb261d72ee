import type { Statement } from 'better-sqlite3';

interface TextChange {
  /** The row was in the FTS index when the transaction began, so its old entry must go. */
  indexed: boolean;
  /** The entry to write at the end, or undefined when the row is gone. */
  entry: { terms: string; scopeTerms: string } | undefined;
}

/**
 * The FTS rows a transaction changes, written at its end in two statements.
 *
 * FTS5 writes its pending terms to disk as a new segment whenever a
 * statement opens a savepoint, which every later write statement of the
 * transaction does. Written one by one between the record and version
 * statements, each changed memory cost a segment flush and, through
 * automerge, a share of segment merging; collected here, a batch costs one
 * delete statement and one insert statement.
 */
export class PendingText {
  private readonly changes = new Map<number, TextChange>();

  /** A row's FTS entry becomes this (a new row, or new text or scope for an indexed one). */
  put(rowId: number, terms: string, scopeTerms: string, indexed: boolean): void {
    const known = this.changes.get(rowId);
    // A row id freed and reused in the same transaction keeps its first `indexed`.
    this.changes.set(rowId, { indexed: known ? known.indexed : indexed, entry: { terms, scopeTerms } });
  }

  /** A row's FTS entry goes. */
  remove(rowId: number): void {
    const known = this.changes.get(rowId);
    if (known && !known.indexed) this.changes.delete(rowId);
    else this.changes.set(rowId, { indexed: true, entry: undefined });
  }

  /** Write the collected changes; call last in the transaction. */
  flush(statements: { deleteMany: () => Statement; insertMany: () => Statement }): void {
    if (this.changes.size === 0) return;
    const removed: number[] = [];
    const inserted: [number, string, string][] = [];
    for (const [rowId, change] of this.changes) {
      if (change.indexed) removed.push(rowId);
      if (change.entry) inserted.push([rowId, change.entry.terms, change.entry.scopeTerms]);
    }
    this.changes.clear();
    if (removed.length > 0) statements.deleteMany().run(JSON.stringify(removed));
    if (inserted.length > 0) statements.insertMany().run(JSON.stringify(inserted));
  }

  /** Forget everything (the transaction rolled back). */
  clear(): void {
    this.changes.clear();
  }
}
