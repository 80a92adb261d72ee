import { describe, expect, it } from 'vitest';
import { percentiles } from '../src/bench-report.js';
import { syntheticMemories } from '../src/peers/synthetic.js';

describe('percentiles', () => {
  it('takes the nearest rank of the sorted samples', () => {
    const samples = Array.from({ length: 100 }, (_, index) => 100 - index);
    expect(percentiles(samples)).toEqual({ p50: 50, p95: 95, n: 100 });
  });

  it('handles a single sample and no sample', () => {
    expect(percentiles([7.123])).toEqual({ p50: 7.12, p95: 7.12, n: 1 });
    expect(percentiles([]).n).toBe(0);
  });
});

describe('syntheticMemories', () => {
  it('is the same sequence for the same seed, with unit vectors of the asked dimension', () => {
    const first = [...syntheticMemories(5, 16, Date.UTC(2025, 0, 1))];
    const again = [...syntheticMemories(5, 16, Date.UTC(2025, 0, 1))];
    expect(again.map((memory) => memory.text)).toEqual(first.map((memory) => memory.text));
    expect(Array.from(again[3]!.vector)).toEqual(Array.from(first[3]!.vector));
    for (const memory of first) {
      expect(memory.vector).toHaveLength(16);
      expect(Math.hypot(...memory.vector)).toBeCloseTo(1, 5);
    }
    expect(new Set(first.map((memory) => memory.id)).size).toBe(5);
  });
});
