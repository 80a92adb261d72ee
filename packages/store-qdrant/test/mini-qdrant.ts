import { createQdrantStore, type QdrantClientLike } from '../src/index.js';

type Point = { id: string; vector: any; payload: any };

/**
 * An in-memory stand-in for a Qdrant collection (adapted from a reviewer's reproduction). It is NOT
 * a Qdrant: it keeps points in a Map and evaluates just the filter conditions the store sends
 * (must / should / must_not, has_id, is_empty, match value / any) for retrieve, scroll (paged by
 * point id), upsert (with insert_only / update_only + update_filter), delete, and a batch update's
 * update_vectors (with update_filter) and delete_vectors. Searches and counts answer empty, and
 * payload updates merge into the points they name. Enough to run the real `apply`, `history` and
 * `deleteByScope` of two stores against one shared collection, and to let a test interleave
 * another writer at a chosen moment (`beforeVersionDelete`).
 */
export function miniQdrant() {
  const points = new Map<string, Point>();
  const holds = (point: Point, condition: any): boolean => {
    if (condition.must || condition.should || condition.must_not) {
      return (
        (condition.must ?? []).every((inner: any) => holds(point, inner)) &&
        (!condition.should || condition.should.some((inner: any) => holds(point, inner))) &&
        (condition.must_not ?? []).every((inner: any) => !holds(point, inner))
      );
    }
    if (condition.has_id) return condition.has_id.includes(point.id);
    if (condition.is_empty) return point.payload[condition.is_empty.key] === undefined;
    const value = point.payload[condition.key];
    if (condition.match?.any) return condition.match.any.includes(value);
    if (condition.match) return value === condition.match.value;
    throw new Error(`the stand-in does not evaluate ${JSON.stringify(condition)}`);
  };
  const matching = (body: any): Point[] =>
    body.points ? body.points.flatMap((id: string) => (points.has(id) ? [points.get(id) as Point] : [])) : [...points.values()].filter((point) => holds(point, body.filter));
  let hook: (() => Promise<void>) | undefined;
  const ok = { operation_id: 1, status: 'completed' };
  const client = {
    versionInfo: async () => ({ title: 'qdrant', version: '1.18.0' }),
    collectionExists: async () => ({ exists: true }),
    getCollection: async () => ({ config: { params: { vectors: { dense: { size: 2, distance: 'Cosine' } }, sparse_vectors: { text: { modifier: 'idf' } } } }, payload_schema: {} }),
    createCollection: async () => true,
    createPayloadIndex: async () => ok,
    retrieve: async (_collection: string, body: any) => body.ids.filter((id: string) => points.has(id)).map((id: string) => structuredClone(points.get(id))),
    scroll: async (_collection: string, body: any) => {
      const found = [...points.values()].filter((point) => !body.filter || holds(point, body.filter)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const start = body.offset === undefined ? 0 : found.findIndex((point) => point.id >= body.offset);
      const page = start < 0 ? [] : found.slice(start, start + body.limit);
      return { points: page.map((point) => structuredClone(point)), next_page_offset: found[start + body.limit]?.id ?? null };
    },
    count: async () => ({ count: 0 }),
    query: async () => ({ points: [] }),
    setPayload: async (_collection: string, body: any) => {
      for (const point of matching(body)) Object.assign(point.payload, structuredClone(body.payload));
      return ok;
    },
    batchUpdate: async (_collection: string, body: any) => {
      for (const operation of body.operations) {
        if (operation.update_vectors) {
          const { points: updates, update_filter: filter } = operation.update_vectors;
          for (const update of updates) {
            const point = points.get(update.id);
            if (point && (!filter || holds(point, filter))) point.vector = { ...point.vector, ...structuredClone(update.vector) };
          }
        } else if (operation.delete_vectors) {
          for (const point of matching(operation.delete_vectors)) for (const name of operation.delete_vectors.vector) delete point.vector[name];
        } else {
          throw new Error(`the stand-in does not apply ${JSON.stringify(operation)}`);
        }
      }
      return body.operations.map(() => ok);
    },
    upsert: async (_collection: string, body: any) => {
      for (const point of body.points) {
        const exists = points.has(point.id);
        if (body.update_mode === 'insert_only' && exists) continue;
        if (body.update_mode === 'update_only' && (!exists || (body.update_filter && !holds(points.get(point.id) as Point, body.update_filter)))) continue;
        points.set(point.id, structuredClone(point));
      }
      return ok;
    },
    delete: async (_collection: string, body: any) => {
      if (hook && matching(body).some((point) => point.payload.kind === 'version')) {
        const run = hook;
        hook = undefined;
        await run();
      }
      for (const point of matching(body)) points.delete(point.id);
      return ok;
    },
  };
  return {
    client: client as unknown as QdrantClientLike,
    points,
    /** Run `step` (once) just before the first delete request that would remove a version point. */
    beforeVersionDelete: (step: () => Promise<void>) => {
      hook = step;
    },
  };
}

/** Two stores (two processes, say) opened on one stand-in collection of 2-dimensional vectors. */
export async function twoStoresOn(qdrant: ReturnType<typeof miniQdrant>) {
  const a = createQdrantStore({ client: qdrant.client, checkServerVersion: false });
  const b = createQdrantStore({ client: qdrant.client, checkServerVersion: false });
  await a.open({ dimension: 2, embedderId: 'e' });
  await b.open({ dimension: 2, embedderId: 'e' });
  return { a, b };
}
