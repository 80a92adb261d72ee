import type { QdrantClientLike, Schemas } from './client.js';
import type { ResolvedQdrantStoreOptions } from './options.js';
import type { QdrantCall } from './retry.js';

/** What every part of the store shares: the client, the retrying caller and the options. */
export interface Backend {
  readonly client: QdrantClientLike;
  readonly call: QdrantCall;
  readonly options: ResolvedQdrantStoreOptions;
  readonly collection: string;
  /** The server the store's own client connects to; undefined for a client given ready-made (it has its own). */
  readonly url: string | undefined;
  /** Where `url` came from (the `urlSource` option), named in the errors that name the URL. */
  readonly urlSource: string | undefined;
}

export type PointRecord = Schemas['Record'];
export type Filter = Schemas['Filter'];

/** Consistency for reads that decide a write (revision checks, write verification). */
export const DECIDING_READ = 'majority' as const;

/** Retrieve points by id in batches. */
export async function retrieveAll(
  backend: Backend,
  operation: string,
  ids: readonly string[],
  request: { withPayload: boolean | string[]; withVector?: boolean | string[]; consistency?: Schemas['ReadConsistency'] | undefined },
): Promise<PointRecord[]> {
  const found: PointRecord[] = [];
  for (const chunk of chunks(ids, backend.options.batchSize)) {
    const points = await backend.call(operation, () =>
      backend.client.retrieve(backend.collection, {
        ids: chunk,
        with_payload: request.withPayload,
        with_vector: request.withVector ?? false,
        ...(request.consistency !== undefined ? { consistency: request.consistency } : {}),
      }),
    );
    found.push(...points);
  }
  return found;
}

/** Every point matching `filter`, page by page (in point-id order). */
export async function scrollAll(
  backend: Backend,
  operation: string,
  filter: Filter,
  withPayload: boolean | string[],
  consistency?: Schemas['ReadConsistency'],
): Promise<PointRecord[]> {
  const found: PointRecord[] = [];
  for await (const page of scrollPages(backend, operation, filter, withPayload, consistency)) found.push(...page);
  return found;
}

/**
 * The points matching `filter`, one page of `batchSize` at a time (in point-id order), each page
 * resumed from the point id Qdrant named as the next one: for passes that must not hold them all.
 */
export async function* scrollPages(
  backend: Backend,
  operation: string,
  filter: Filter,
  withPayload: boolean | string[],
  consistency?: Schemas['ReadConsistency'],
): AsyncGenerator<PointRecord[]> {
  let offset: Schemas['ExtendedPointId'] | undefined;
  for (;;) {
    const page = await backend.call(operation, () =>
      backend.client.scroll(backend.collection, {
        filter,
        limit: backend.options.batchSize,
        with_payload: withPayload,
        with_vector: false,
        ...(offset !== undefined ? { offset } : {}),
        ...(consistency !== undefined ? { consistency } : {}),
      }),
    );
    yield page.points;
    const next = page.next_page_offset;
    if (next === undefined || next === null || typeof next === 'object') return;
    offset = next;
  }
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let index = 0; index < items.length; index += size) result.push(items.slice(index, index + size));
  return result;
}

/** The dense vector of a retrieved point (named vector `dense`). */
export function denseVectorOf(point: PointRecord): number[] | undefined {
  const vector = point.vector as Record<string, unknown> | null | undefined;
  const dense = vector && typeof vector === 'object' && !Array.isArray(vector) ? vector.dense : undefined;
  return Array.isArray(dense) ? (dense as number[]) : undefined;
}
