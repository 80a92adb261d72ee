import { keywordText, TOKENIZER_VERSION } from '@memloom/core';
import type { Database } from 'better-sqlite3';
import { readMeta, TERMS_META_KEY, writeMeta } from './schema.js';
import { scopeOfColumns } from './rows.js';
import { indexTerms, INSERT_TEXT_ROWS, scopeTerms } from './text.js';

/** Rows re-tokenized per statement when the keyword index is rebuilt. */
const BATCH = 1000;

/** True when the keyword index was made by another version of core's tokenizer (or by a store that did not say). */
export function termsOutdated(database: Database): boolean {
  return readMeta(database, TERMS_META_KEY) !== String(TOKENIZER_VERSION);
}

/**
 * Make the keyword index match core's current tokenizer: FTS5 holds terms
 * made by `keywordTerms` when each memory was written, so after a tokenizer change
 * (`TOKENIZER_VERSION`) a file's old rows would match differently from its new
 * ones. Re-tokenizes every memory's keyword text (content and context); call inside a write transaction.
 */
export function refreshTerms(database: Database): void {
  if (!termsOutdated(database)) return;
  const hasRows = database.prepare('SELECT 1 FROM memories LIMIT 1').get() !== undefined;
  if (hasRows) {
    database.prepare("INSERT INTO memory_text (memory_text) VALUES ('delete-all')").run();
    const insert = database.prepare(INSERT_TEXT_ROWS);
    const page = database.prepare('SELECT row_id, content, context, user_id, agent_id, session_id FROM memories WHERE row_id > ? ORDER BY row_id LIMIT ?');
    let after = -1;
    for (;;) {
      const rows = page.all(after, BATCH) as Array<{
        row_id: number;
        content: string;
        context: string | null;
        user_id: string | null;
        agent_id: string | null;
        session_id: string | null;
      }>;
      if (rows.length === 0) break;
      const terms = (row: (typeof rows)[number]) => indexTerms(keywordText({ content: row.content, ...(row.context !== null ? { context: row.context } : {}) }));
      insert.run(JSON.stringify(rows.map((row) => [row.row_id, terms(row), scopeTerms(scopeOfColumns(row.user_id, row.agent_id, row.session_id))])));
      after = rows[rows.length - 1]!.row_id;
    }
  }
  writeMeta(database, TERMS_META_KEY, String(TOKENIZER_VERSION));
}
