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

  it('scores a vector the same in an approximate search as in a scan', () => {
    // An approximate search scores its candidates four rows at a time and the rest one at a time; a
    // scan reads them one by one: the sums must be the same, in the same order.
    const random = seededRandom(8);
    const dimension = 484;
    const index = new FlatVectorIndex(dimension, { approximateFrom: 16, approximateShare: 1 });
    for (let key = 0; key < 301; key++) index.set(key, randomUnit(random, dimension), 'g');
    const query = randomUnit(random, dimension);
    const scanned = index.nearest(query, 301, 'g');
    const approximate = index.nearest(query, 301, 'g', { approximate: true });
    // Every vector is a candidate (share 1): the same hits, and the very same scores.
    expect(approximate).toHaveLength(301);
    expect(approximate).toEqual(scanned);
  });

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

  describe('approximate search', () => {
    /** A unit vector close to `vector`: noise of the given size added, normalized. */
    function near(random: () => number, vector: number[], noise: number): number[] {
      const moved = vector.map((value) => value + noise * (random() - 0.5));
      const norm = Math.hypot(...moved);
      return moved.map((value) => value / norm);
    }

    it('scans exactly below approximateFrom, and when not asked to approximate', () => {
      const random = seededRandom(11);
      const index = new FlatVectorIndex(32, { approximateFrom: 300, approximateShare: 0.01 });
      const vectors = new Map<number, number[]>();
      for (let key = 0; key < 299; key++) {
        const vector = randomUnit(random, 32);
        vectors.set(key, vector);
        index.set(key, vector, 'g');
      }
      for (let trial = 0; trial < 20; trial++) {
        const query = randomUnit(random, 32);
        expectSameHits(index.nearest(query, 5, 'g', { approximate: true }), scan(vectors, query, 5));
      }
      // At the threshold it approximates: only the candidates (at least 256) are scored, so over
      // many queries some answer differs from the scan; without `approximate` none does.
      const vector = randomUnit(random, 32);
      vectors.set(299, vector);
      index.set(299, vector, 'g');
      let differing = 0;
      for (let trial = 0; trial < 200; trial++) {
        const query = randomUnit(random, 32);
        const expected = scan(vectors, query, 40);
        expectSameHits(index.nearest(query, 40, 'g'), expected);
        const approximate = index.nearest(query, 40, 'g', { approximate: true });
        if (approximate.some((hit, rank) => hit.key !== expected[rank]?.key)) differing++;
      }
      expect(differing).toBeGreaterThan(0);
    });

    it('finds near neighbours among many vectors, scores them exactly, and stays in the group', () => {
      const random = seededRandom(12);
      const dimension = 484;
      const index = new FlatVectorIndex(dimension, { approximateFrom: 1000, approximateShare: 0.01 });
      const vectors = new Map<number, number[]>();
      for (let key = 0; key < 6000; key++) {
        const vector = randomUnit(random, dimension);
        vectors.set(key, vector);
        index.set(key, vector, key % 2 === 0 ? 'even' : 'odd');
      }
      for (let trial = 0; trial < 40; trial++) {
        // A vector in the other group that is closer still must not be returned.
        const query = randomUnit(random, dimension);
        const planted = 10_000 + trial;
        const plantedVector = near(random, query, 0.06);
        const decoy = 20_000 + trial;
        index.set(planted, plantedVector, 'even');
        index.set(decoy, query, 'odd');
        const [hit] = index.nearest(query, 1, 'even', { approximate: true });
        expect(hit?.key).toBe(planted);
        const exact = plantedVector.reduce((sum, value, index) => sum + value * (query[index] as number), 0);
        expect(hit?.score).toBeCloseTo(exact, 5);
        // Every hit is in the group and scored exactly.
        for (const other of index.nearest(query, 20, 'even', { approximate: true })) {
          const vector = other.key === planted ? plantedVector : (vectors.get(other.key) as number[]);
          expect(other.key === planted || other.key % 2 === 0).toBe(true);
          expect(other.score).toBeCloseTo(vector.reduce((sum, value, index) => sum + value * (query[index] as number), 0), 5);
        }
        index.delete(planted);
        index.delete(decoy);
      }
    });

    it('keeps codes in step with replaced, moved and deleted vectors, and across growth', () => {
      const random = seededRandom(13);
      const dimension = 64;
      const index = new FlatVectorIndex(dimension, { approximateFrom: 500, approximateShare: 0.001 });
      for (let key = 0; key < 600; key++) index.set(key, randomUnit(random, dimension), 'g');
      const query = randomUnit(random, dimension);
      // Another group, filled before any approximate search, with a near twin of the query.
      for (let key = 100_000; key < 100_600; key++) index.set(key, key === 100_300 ? near(random, query, 0.01) : randomUnit(random, dimension), 'k');
      // The first approximate search in a group makes its codes; later changes must be seen.
      index.nearest(query, 1, 'g', { approximate: true });
      expect(index.nearest(query, 1, 'k', { approximate: true })[0]?.key).toBe(100_300);
      // Key 7 is replaced by the query's near twin: found. Then replaced by its opposite: not first any more.
      index.set(7, near(random, query, 0.01), 'g');
      expect(index.nearest(query, 1, 'g', { approximate: true })[0]?.key).toBe(7);
      index.set(7, query.map((value) => -value), 'g');
      expect(index.nearest(query, 1, 'g', { approximate: true })[0]?.key).not.toBe(7);
      // Moved to another group: gone from this one.
      index.set(8, near(random, query, 0.01), 'g');
      expect(index.nearest(query, 1, 'g', { approximate: true })[0]?.key).toBe(8);
      index.set(8, near(random, query, 0.01), 'h');
      expect(index.nearest(query, 1, 'g', { approximate: true })[0]?.key).not.toBe(8);
      // Deleted, and its slot reused by an unrelated vector: the twin is not found through the old code.
      index.set(9, near(random, query, 0.01), 'g');
      index.delete(9);
      index.set(5000, query.map((value) => -value), 'g');
      expect(index.nearest(query, 3, 'g', { approximate: true }).map((hit) => hit.key)).not.toContain(9);
      // Growing moves the codes: a twin added after many more vectors is still found, and so is an old one.
      index.set(10, near(random, query, 0.01), 'g');
      index.nearest(query, 1, 'g', { approximate: true });
      for (let key = 1000; key < 3000; key++) index.set(key, randomUnit(random, dimension), 'g');
      index.set(3000, near(random, query, 0.005), 'g');
      const hits = index.nearest(query, 2, 'g', { approximate: true }).map((hit) => hit.key);
      expect(hits.sort()).toEqual([10, 3000].sort());
      // The whole index, no group, approximates too (deleted slots are never returned).
      for (let key = 1000; key < 1500; key++) index.delete(key);
      const all = index.nearest(query, 5, undefined, { approximate: true }).map((hit) => hit.key);
      expect(all).toContain(3000);
      expect(all.every((key) => key < 1000 || key >= 1500)).toBe(true);
      // More changes than vectors with no approximate search between them: the codes are all made again at the next one.
      for (let round = 0; round < 3; round++) for (let key = 0; key < 600; key++) index.set(key, randomUnit(random, dimension), 'g');
      index.set(11, near(random, query, 0.005), 'g');
      expect(index.nearest(query, 3, 'g', { approximate: true }).map((hit) => hit.key)).toContain(11);
    });

    it('widens its cut-off when the sampled codes were closer than the rest', () => {
      // 20,000 vectors: the search samples every 16th slot to set its cut-off. Near twins of the
      // query sit exactly at the first 40 sampled places, so the sample promises many close
      // codes that the whole group does not have; asked for 300, it must still score 300.
      const random = seededRandom(14);
      const dimension = 32;
      const count = 20_000;
      const index = new FlatVectorIndex(dimension, { approximateFrom: 1000 });
      const query = randomUnit(random, dimension);
      const sampleSize = Math.max(1024, Math.ceil(count / 16));
      const twins = new Set(Array.from({ length: 40 }, (_, at) => Math.floor((at * count) / sampleSize)));
      for (let key = 0; key < count; key++) index.set(key, twins.has(key) ? near(random, query, 0.01) : randomUnit(random, dimension), 'g');
      const hits = index.nearest(query, 300, 'g', { approximate: true });
      expect(hits).toHaveLength(300);
      expect(new Set(hits.slice(0, 40).map((hit) => hit.key))).toEqual(twins);
    });

    it('answers exactly when the approximate search would need memory past maxBytes', () => {
      const random = seededRandom(15);
      const vectors = Array.from({ length: 20_000 }, () => randomUnit(random, 16));
      const unbounded = new FlatVectorIndex(16, { approximateFrom: 1000 });
      vectors.forEach((vector, key) => unbounded.set(key, vector, 'g'));
      // Exactly the memory that holding these vectors took: an exact scan fits, the approximate search's scratch space does not.
      const bounded = new FlatVectorIndex(16, { approximateFrom: 1000, maxBytes: unbounded.bytes });
      vectors.forEach((vector, key) => bounded.set(key, vector, 'g'));
      const query = randomUnit(random, 16);
      const exact = unbounded.nearest(query, 50, 'g');
      expect(bounded.nearest(query, 50, 'g', { approximate: true })).toEqual(exact);
      expect(bounded.bytes).toBeLessThanOrEqual(unbounded.bytes);
      // Without the bound the approximate search runs (and may differ from the exact answer).
      expect(unbounded.nearest(query, 50, 'g', { approximate: true })).toHaveLength(50);
      expect(unbounded.bytes).toBeGreaterThan(bounded.bytes);
    });

    it('refuses bad approximation options with typed errors', () => {
      for (const options of [{ approximateFrom: 0 }, { approximateFrom: 1.5 }, { approximateShare: 0 }, { approximateShare: 2 }]) {
        try {
          new FlatVectorIndex(8, options);
          expect.unreachable();
        } catch (error) {
          expect(MemloomError.hasCode(error, 'INVALID_INPUT')).toBe(true);
        }
      }
    });
  });

  it('ships the kernel compiled from kernel.wat', () => {
    const script = join(import.meta.dirname, '..', 'scripts', 'build-kernel.mjs');
    expect(execFileSync(process.execPath, [script, '--check'], { encoding: 'utf8' })).toContain('matches kernel.wat');
  });
});
