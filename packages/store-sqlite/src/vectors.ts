import { assertUsableVector, MemloomError } from '@memloom/core';
import { BACKEND } from './connection.js';

/** A vector as sqlite-vec stores it: float32, scaled to unit length. */
export function toVectorBlob(vector: readonly number[], dimension: number, what: string): Buffer {
  if (vector.length !== dimension) {
    throw new MemloomError({
      code: 'DIMENSION_MISMATCH',
      backend: BACKEND,
      message: `${what} has dimension ${vector.length}; this store holds vectors of dimension ${dimension}`,
      details: { expected: dimension, actual: vector.length },
    });
  }
  // Finite values, not all zero: core's rule for every store.
  assertUsableVector(vector, what, BACKEND);
  // Scaled by the largest value first: squares of very large (or very small) values would
  // overflow to Infinity (or underflow to 0) and leave a zero vector.
  let largest = 0;
  for (const value of vector) largest = Math.max(largest, Math.abs(value));
  let norm = 0;
  for (const value of vector) norm += (value / largest) ** 2;
  const scale = 1 / Math.sqrt(norm);
  const floats = new Float32Array(dimension);
  for (let index = 0; index < dimension; index++) floats[index] = ((vector[index] as number) / largest) * scale;
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
}

/** A float32 blob as floats: a view when its bytes are aligned, else a copy. */
export function floatsOfBlob(blob: Buffer): Float32Array {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
  return new Float32Array(new Uint8Array(blob).buffer);
}

export function fromVectorBlob(blob: Buffer): number[] {
  return Array.from(floatsOfBlob(blob));
}

/** Cosine similarity of two unit vectors from their L2 distance: |a - b|^2 = 2 - 2 cos. */
export function cosineFromDistance(distance: number): number {
  return Math.max(-1, Math.min(1, 1 - (distance * distance) / 2));
}
