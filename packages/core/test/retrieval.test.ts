import { describe, expect, it } from 'vitest';
import { combineScore, rankCandidates, retrievalConfigSchema, type MemoryRecord } from '../src/index.js';

describe('rankCandidates', () => {
  it('ranks more candidates than a call takes arguments (a search restricted to 200,000 ids)', () => {
    const count = 200_000;
    const records = Array.from({ length: count }, (_, index) => ({ id: `m${index}`, weight: 1, updatedAt: '2024-01-01T00:00:00.000Z' }) as MemoryRecord);
    const vectorHits = records.map((memory, index) => ({ memory, score: 1 - index / count }));
    const textHits = records.map((memory, index) => ({ memory, score: 10 + index }));
    const ranked = rankCandidates(vectorHits, textHits, {
      nowMs: Date.parse('2024-01-02T00:00:00.000Z'),
      config: retrievalConfigSchema.parse({}),
      candidateLimit: count,
      bestText: 5,
    });
    expect(ranked).toHaveLength(count);
    const last = ranked.find((hit) => hit.memory.id === `m${count - 1}`);
    // The best keyword score is the list's own (10 + 199,999), above the wider search's 5.
    expect(last?.parts.text).toBe(1);
    expect(ranked.find((hit) => hit.memory.id === 'm0')?.parts.text).toBeCloseTo(10 / (10 + count - 1), 12);
  }, 30_000);

  it('gives a memory found only by keywords the lowest cosine of a full vector list, and 0 when the list was not full', () => {
    const record = (id: string) => ({ id, weight: 1, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z' }) as MemoryRecord;
    const [a, b, c] = [record('a'), record('b'), record('c')];
    const vectorHits = [
      { memory: a, score: 0.9 },
      { memory: b, score: 0.4 },
    ];
    const rank = (candidateLimit: number) =>
      rankCandidates(vectorHits, [{ memory: c, score: 3 }], { nowMs: Date.parse('2024-01-02T00:00:00.000Z'), config: retrievalConfigSchema.parse({}), candidateLimit });
    // Two hits for a limit of two: c was below the cut, so its cosine is at most b's.
    expect(rank(2).find((hit) => hit.memory.id === 'c')?.parts.semantic).toBe(0.4);
    expect(rank(3).find((hit) => hit.memory.id === 'c')?.parts.semantic).toBe(0);
  });

  it('clips a weight outside 0..1 (a record written by hand) into the weight part', () => {
    const record = (id: string, weight: number) => ({ id, weight, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z' }) as MemoryRecord;
    const ranked = rankCandidates([{ memory: record('heavy', 1.5), score: 0.5 }, { memory: record('negative', -0.2), score: 0.5 }], [], {
      nowMs: Date.parse('2024-01-02T00:00:00.000Z'),
      config: retrievalConfigSchema.parse({}),
      candidateLimit: 10,
    });
    expect(Object.fromEntries(ranked.map((hit) => [hit.memory.id, hit.parts.weight]))).toEqual({ heavy: 1, negative: 0 });
  });
});

describe('combineScore', () => {
  const parts = { semantic: 0.8, text: 0.5, weight: 1, recency: 0.5 };
  const mean = 0.65 * 0.8 + 0.3 * 0.5 + 0.03 + 0.02 * 0.5;

  it('adds the date weight, on the scale of the four others, to a memory of the period named, clipped to 1', () => {
    const weights = { semantic: 0.65, text: 0.3, weight: 0.03, recency: 0.02, date: 0.1 };
    expect(combineScore(parts, weights)).toBeCloseTo(mean, 12);
    expect(combineScore({ ...parts, date: 0 }, weights)).toBe(combineScore(parts, weights));
    expect(combineScore({ ...parts, date: 1 }, weights)).toBeCloseTo(mean + 0.1, 12);
    // Weights twice the size: the same scores.
    expect(combineScore({ ...parts, date: 1 }, { semantic: 1.3, text: 0.6, weight: 0.06, recency: 0.04, date: 0.2 })).toBeCloseTo(mean + 0.1, 12);
    expect(combineScore({ semantic: 1, text: 1, weight: 1, recency: 1, date: 1 }, weights)).toBe(1);
  });

  it('counts no date with the four weights written before it', () => {
    const fourWeights = { semantic: 0.65, text: 0.3, weight: 0.03, recency: 0.02 };
    expect(combineScore({ ...parts, date: 1 }, fourWeights)).toBeCloseTo(mean, 12);
  });
});
