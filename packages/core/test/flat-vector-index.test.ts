import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FlatVectorIndex, flatVectorIndexSupported, MemloomError } from '../src/index.js';
import { seededRandom } from '../src/testing/index.js';

/** What the index must answer: every vector compared in plain JavaScript (float64), best first, ties by key. */
function scan(vectors: Map<number, number[]>, query: number[], limit: number, keys?: Set<number>): { key: number; score: number }[] {
  const hits = [...vectors]
    .filter(([key]) => !keys || keys.has(key))
    .map(([key, vector]) => ({ key, score: vector.reduce((sum, value, index) => sum + value * (query[index] as number), 0) }));
  return hits.sort((a, b) => b.score - a.score || a.key - b.key).slice(0, limit);
}

function randomUnit(random: () => number, dimension: number): number[] {
  const vector = Array.from({ length: dimension }, () => random() - 0.5);
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
}

function expectSameHits(actual: { key: number; score: number }[], expected: { key: number; score: number }[]): void {
  expect(actual.map((hit) => hit.key)).toEqual(expected.map((hit) => hit.key));
  actual.forEach((hit, index) => expect(hit.score).toBeCloseTo((expected[index] as { score: number }).score, 5));
}

describe('FlatVectorIndex', () => {
  it('runs here (WebAssembly SIMD)', () => {
    expect(flatVectorIndexSupported()).toBe(true);
  });

  // Dimensions that are, and are not, a multiple of the kernel's 8 floats per step.
  for (const dimension of [1, 7, 8, 13, 484]) {
    it(`finds the same neighbours as a plain scan at dimension ${dimension}`, () => {
      const random = seededRandom(dimension);
      const index = new FlatVectorIndex(dimension);
      const vectors = new Map<number, number[]>();
      for (let key = 0; key < 500; key++) {
        const vector = randomUnit(random, dimension);
        vectors.set(key * 3, vector);
        index.set(key * 3, vector, `user-${key % 5}`);
      }
      expect(index.size).toBe(500);
      for (let trial = 0; trial < 5; trial++) {
        const query = randomUnit(random, dimension);
        expectSameHits(index.nearest(query, 10), scan(vectors, query, 10));
        const group = new Set([...vectors.keys()].filter((key) => (key / 3) % 5 === trial));
        expectSameHits(index.nearest(query, 7, `user-${trial}`), scan(vectors, query, 7, group));
      }
    });
  }

  it('replaces, moves between groups and deletes', () => {
    const index = new FlatVectorIndex(3);
    index.set(1, [1, 0, 0], 'a');
    index.set(2, [0, 1, 0], 'a');
    index.set(3, [0, 0, 1], 'b');
    expect(index.nearest([1, 0, 0], 1)).toEqual([{ key: 1, score: 1 }]);
    index.set(1, [0, 0, 1], 'b');
    expect(index.nearest([1, 0, 0], 3, 'a').map((hit) => hit.key)).toEqual([2]);
    expect(index.nearest([0, 0, 1], 3, 'b').map((hit) => hit.key)).toEqual([1, 3]);
    expect(index.delete(3)).toBe(true);
    expect(index.delete(3)).toBe(false);
    expect(index.has(3)).toBe(false);
    expect(index.nearest([0, 0, 1], 3).map((hit) => hit.key)).toEqual([1, 2]);
    expect(index.nearest([0, 0, 1], 3, 'b').map((hit) => hit.key)).toEqual([1]);
    // A freed slot is reused: the deleted vector never comes back.
    index.set(4, [0, 1, 0]);
    expect(index.size).toBe(3);
    expect(index.nearest([0, 0, 1], 5).map((hit) => hit.key)).toEqual([1, 2, 4]);
    expect(index.nearest([0, 0, 1], 5, 'none')).toEqual([]);
  });

  it('stays exact through many random adds, replacements, moves between groups and deletes', () => {
    const random = seededRandom(21);
    const index = new FlatVectorIndex(16);
    const vectors = new Map<number, number[]>();
    const groupOf = new Map<number, string | undefined>();
    for (let step = 0; step < 3000; step++) {
      const key = Math.floor(random() * 400);
      if (random() < 0.25) {
        expect(index.delete(key)).toBe(vectors.delete(key));
        groupOf.delete(key);
      } else {
        const vector = randomUnit(random, 16);
        const group = random() < 0.1 ? undefined : `g${Math.floor(random() * 4)}`;
        index.set(key, vector, group);
        vectors.set(key, vector);
        groupOf.set(key, group);
      }
      if (step % 300 === 299) {
        expect(index.size).toBe(vectors.size);
        const query = randomUnit(random, 16);
        expectSameHits(index.nearest(query, 12), scan(vectors, query, 12));
        for (const group of ['g0', 'g1', 'g2', 'g3']) {
          const members = new Set([...groupOf].filter(([, of]) => of === group).map(([key]) => key));
          expectSameHits(index.nearest(query, 1000, group), scan(vectors, query, 1000, members));
        }
      }
    }
  });

  it('answers best first with ties broken by the smaller key, and never more than it holds', () => {
    const index = new FlatVectorIndex(2);
    for (const key of [9, 4, 7]) index.set(key, [1, 0]);
    index.set(1, [0, 1]);
    expect(index.nearest([1, 0], 2).map((hit) => hit.key)).toEqual([4, 7]);
    expect(index.nearest([1, 0], 10).map((hit) => hit.key)).toEqual([4, 7, 9, 1]);
    expect(index.nearest([1, 0], 0)).toEqual([]);
    expect(new FlatVectorIndex(2).nearest([1, 0], 5)).toEqual([]);
  });

  it('grows past its first memory while keeping every vector', () => {
    const random = seededRandom(7);
    const index = new FlatVectorIndex(64);
    const vectors = new Map<number, number[]>();
    // 64 floats a row: 3,000 rows need several WebAssembly pages and growth steps.
    for (let key = 0; key < 3000; key++) {
      const vector = randomUnit(random, 64);
      vectors.set(key, vector);
      index.set(key, vector, key % 2 === 0 ? 'even' : undefined);
      if (key % 1000 === 999) {
        const query = randomUnit(random, 64);
        expectSameHits(index.nearest(query, 5), scan(vectors, query, 5));
      }
    }
    const query = randomUnit(random, 64);
    const even = new Set([...vectors.keys()].filter((key) => key % 2 === 0));
    expectSameHits(index.nearest(query, 5, 'even'), scan(vectors, query, 5, even));
    index.reserveFor(10_000);
    expectSameHits(index.nearest(query, 5), scan(vectors, query, 5));
    expect(index.bytes).toBeGreaterThanOrEqual(10_000 * 64 * 4);
  });

  it('refuses to grow past maxBytes, keeping what it holds', () => {
    // 64 floats a row (256 bytes): 300 rows and their scratch space fit in 128 KiB, 1,000 do not.
    const index = new FlatVectorIndex(64, { maxBytes: 128 * 1024 });
    const random = seededRandom(4);
    const vectors = new Map<number, number[]>();
    let refused: unknown;
    for (let key = 0; key < 1000 && !refused; key++) {
      const vector = randomUnit(random, 64);
      try {
        index.set(key, vector);
        vectors.set(key, vector);
      } catch (error) {
        refused = error;
      }
    }
    expect(refused).toMatchObject({ code: 'NOT_SUPPORTED' });
    expect(vectors.size).toBeGreaterThan(300);
    expect(index.size).toBe(vectors.size);
    expect(index.bytes).toBeLessThanOrEqual(128 * 1024);
    const query = randomUnit(random, 64);
    expectSameHits(index.nearest(query, 5), scan(vectors, query, 5));
    expect(() => new FlatVectorIndex(4, { maxBytes: 0 })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });

  it('refuses bad keys, dimensions and queries with typed errors', () => {
    const index = new FlatVectorIndex(3);
    const codeOf = (task: () => unknown): string | undefined => {
      try {
        task();
      } catch (error) {
        return MemloomError.isInstance(error) ? error.code : 'not a MemloomError';
      }
      return undefined;
    };
    expect(codeOf(() => new FlatVectorIndex(0))).toBe('INVALID_INPUT');
    expect(codeOf(() => index.set(-1, [1, 0, 0]))).toBe('INVALID_INPUT');
    expect(codeOf(() => index.set(1.5, [1, 0, 0]))).toBe('INVALID_INPUT');
    expect(codeOf(() => index.set(1, [1, 0]))).toBe('DIMENSION_MISMATCH');
    expect(codeOf(() => index.set(1, [1, Number.NaN, 0]))).toBe('INVALID_INPUT');
    expect(codeOf(() => index.set(1, [1, Number.POSITIVE_INFINITY, 0]))).toBe('INVALID_INPUT');
    expect(codeOf(() => index.nearest([1, 0, 0, 0], 1))).toBe('DIMENSION_MISMATCH');
    expect(index.size).toBe(0);
  });

  it('ships the kernel compiled from kernel.wat', () => {
    const script = join(import.meta.dirname, '..', 'scripts', 'build-kernel.mjs');
    expect(execFileSync(process.execPath, [script, '--check'], { encoding: 'utf8' })).toContain('matches kernel.wat');
  });
});
