import { MemloomError, TOKENIZER_VERSION } from '@memloom/core';
import { DECIDING_READ, scrollPages, type Backend, type PointRecord } from './backend.js';
import type { Schemas } from './client.js';
import { memoryFilter } from './filters.js';
import type { QdrantProgress } from './options.js';
import { fromStoredMemory, type MetaPayload } from './payload.js';
import { META_POINT_ID } from './point-ids.js';
import { WRITE, writtenUnlessForbidden } from './retry.js';
import { memoryTextVector } from './sparse-text.js';

/**
 * Make the keyword vectors match core's current tokenizer: each memory's sparse vector holds the
 * terms `keywordTerms` gave when it was written, and a query's terms are the current ones, so after a
 * tokenizer change (`TOKENIZER_VERSION`, or none recorded) old memories would match and rank
 * differently from new ones. Scrolls the memories `batchSize` at a time and rewrites only their
 * `text` vector, each on the condition that the memory still holds the write it was read at (a
 * memory written meanwhile got its vector from that write). The version is recorded after the last
 * page: an open that stops midway leaves it unrecorded, and the next open does it all again (it is
 * idempotent, so two stores opening at once only do the work twice). A key that may not write (HTTP
 * 403, as a read-only API key gets) leaves the terms as they are, as SQLite does with a file it may
 * not write: searched with them until a store that may write opens the collection. A point a read refuses
 * (damaged: `STORE_CORRUPT`) is skipped, as it is, and reported in the progress (`skipped`): it does not fail the open.
 */
export async function refreshTerms(backend: Backend, meta: MetaPayload): Promise<void> {
  if (meta.tokenizerVersion === TOKENIZER_VERSION) return;
  const { client, call, collection, options } = backend;
  const memories = memoryFilter();
  const { count: total } = await call('count memories to re-tokenize', () => client.count(collection, { filter: memories, exact: true }));
  let done = 0;
  const skipped: NonNullable<QdrantProgress['skipped']> = [];
  const report = () => options.onProgress?.({ task: 'retokenize', done, total: Math.max(total, done), ...(skipped.length > 0 ? { skipped: [...skipped] } : {}) });
  await report();
  // A majority read: a replica behind would give an older write, and the rewrite conditional on it
  // would be skipped, leaving that memory's old terms under the new version.
  for await (const page of scrollPages(backend, 'read memories to re-tokenize', memories, true, DECIDING_READ)) {
    if (page.length === 0) continue;
    if (!(await writtenUnlessForbidden(() => rewriteTerms(backend, page, skipped)))) return;
    done += page.length;
    await report();
  }
  await writtenUnlessForbidden(() =>
    call(
      'record the tokenizer version',
      () =>
        client.setPayload(collection, {
          wait: true,
          ordering: options.writeOrdering,
          points: [META_POINT_ID],
          payload: { tokenizerVersion: TOKENIZER_VERSION },
        }),
      WRITE,
    ),
  );
}

/**
 * One request for a page: `update_vectors` for the memories that have terms, `delete_vectors` of
 * `text` for those that have none now. Both only where the point still holds the write read
 * (writeIds are unique to each write, so one list covers the page). Sent as a batch update:
 * `QdrantClient.updateVectors` (1.18) drops `update_filter` from the request. A point a read
 * refuses is left out and added to `skipped`.
 */
async function rewriteTerms(backend: Backend, points: readonly PointRecord[], skipped: NonNullable<QdrantProgress['skipped']>): Promise<void> {
  const { client, call, collection, options } = backend;
  const withTerms: Schemas['PointVectors'][] = [];
  const withoutTerms: Schemas['ExtendedPointId'][] = [];
  const writeIds: string[] = [];
  for (const point of points) {
    let stored: ReturnType<typeof fromStoredMemory>;
    try {
      stored = fromStoredMemory(point.payload);
    } catch (error) {
      if (!MemloomError.hasCode(error, 'STORE_CORRUPT')) throw error;
      skipped.push({ pointId: String(point.id), message: error.message });
      continue;
    }
    const { record, writeId } = stored;
    writeIds.push(writeId);
    const text = memoryTextVector(record, options.textSearch);
    if (text) withTerms.push({ id: point.id, vector: { text } });
    else withoutTerms.push(point.id);
  }
  const unchanged: Schemas['Condition'] = { key: 'writeId', match: { any: writeIds } };
  const operations: Schemas['UpdateOperation'][] = [];
  if (withTerms.length > 0) operations.push({ update_vectors: { points: withTerms, update_filter: { must: [unchanged] } } });
  if (withoutTerms.length > 0) operations.push({ delete_vectors: { filter: { must: [{ has_id: withoutTerms }, unchanged] }, vector: ['text'] } });
  if (operations.length === 0) return;
  await call('rewrite keyword vectors', () => client.batchUpdate(collection, { wait: true, ordering: options.writeOrdering, operations }), WRITE);
}

