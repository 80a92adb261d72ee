import { DIMENSION } from './store-data.js';

/**
 * The baseline: dot products of unit vectors (= cosine) over the given rows
 * of one flat Float32Array, keeping the best k in a small sorted buffer.
 * Returns row indexes, best first.
 */
export function bruteForceTopK(flat: Float32Array, query: Float32Array, rows: readonly number[], k: number): number[] {
  const bestScores = new Float64Array(k).fill(-Infinity);
  const bestRows = new Int32Array(k).fill(-1);
  for (const row of rows) {
    const offset = row * DIMENSION;
    let dot = 0;
    for (let index = 0; index < DIMENSION; index++) dot += flat[offset + index]! * query[index]!;
    if (dot <= bestScores[k - 1]!) continue;
    let position = k - 1;
    while (position > 0 && bestScores[position - 1]! < dot) {
      bestScores[position] = bestScores[position - 1]!;
      bestRows[position] = bestRows[position - 1]!;
      position--;
    }
    bestScores[position] = dot;
    bestRows[position] = row;
  }
  return Array.from(bestRows).filter((row) => row >= 0);
}
