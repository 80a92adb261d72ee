import { describe, expect, it } from 'vitest';
import { rankCandidates, retrievalConfigSchema, type MemoryRecord } from '../src/index.js';

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
});
