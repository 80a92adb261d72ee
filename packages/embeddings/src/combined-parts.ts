import { assertValidVector, MemloomError, type Embedder } from '@memloom/core';
import { shown } from './known-options.js';

/**
 * Checks shared by the embedders that combine others (composite,
 * script-routed): the optional `id` option, and each part's vectors as
 * they are placed side by side.
 */

/** An `id` option, when given, names the vector space: a non-empty string. */
export function assertCombinedId(id: unknown, embedderName: string): void {
  if (id !== undefined && (typeof id !== 'string' || id.trim() === '')) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: `${embedderName}: id must be a non-empty string, got ${shown(id)}` });
  }
}

/**
 * Write one part's vector into `target` from `offset`, scaled to length
 * `scale` (the parts are normalized here, whatever they return). A part with
 * scale 0 contributes nothing and may have returned nothing.
 */
export function placePart(target: number[], offset: number, values: readonly number[] | undefined, embedder: Embedder, scale: number): void {
  if (scale === 0) return;
  assertValidVector(values, embedder.dimension, embedder.id, 'embeddings');
  let norm = 0;
  for (const value of values) norm += value * value;
  const factor = norm > 0 ? scale / Math.sqrt(norm) : 0;
  for (let index = 0; index < values.length; index++) target[offset + index] = (values[index] as number) * factor;
}

/**
 * The `queryReading` of an embedder made of `parts`: theirs, joined with `+`, when any part reads a
 * query otherwise than a document (the offline embedder: `zh-discourse-2`), so that a cache around the
 * whole keys its queries by it too, and refuses `sharePurposes`; undefined when no part does.
 */
export function combinedQueryReading(parts: readonly Embedder[]): string | undefined {
  const readings = parts.map((part) => part.queryReading).filter((reading): reading is string => typeof reading === 'string' && reading !== '');
  return readings.length > 0 ? readings.join('+') : undefined;
}
