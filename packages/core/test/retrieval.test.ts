import { describe, expect, it } from 'vitest';
import { createMemory, rankCandidates, retrievalConfigSchema, type MemoryRecord } from '../src/index.js';
import { queryTermCoverage } from '../src/text/query-coverage.js';
import { createFakeClock, createInMemoryStore, createTestEmbedder } from '../src/testing/index.js';

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

describe('the keyword part of a query with Chinese terms', () => {
  const mars = '火星上的天气怎么样？';
  // tokenize(mars): 火 火星 星 上 天 天气 气 怎 怎么 么 样 (的 is no term alone): 11 terms.
  const marsTerms = 11;

  async function textPart(query: string, contents: string[], wanted: string): Promise<number | undefined> {
    const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder({ dimension: 16 }), clock: createFakeClock('2025-06-01T12:00:00Z') });
    for (const content of contents) await memory.add(content);
    const results = await memory.search(query, { limit: 10 });
    await memory.close();
    return results.find((result) => result.memory.content === wanted)?.parts.text;
  }

  it('counts a memory sharing one character of a long question for that share, not as a full match', async () => {
    // Before: the only keyword hit, so the best one, so 1 (the whole keyword weight for the character 上).
    expect(await textPart(mars, ['我住在上海。', '我喜欢喝咖啡。'], '我住在上海。')).toBeCloseTo(1 / marsTerms, 12);
  });

  it('keeps a full match at 1, and ranks a real word above a stray character of it', async () => {
    expect(await textPart(mars, ['火星上的天气怎么样', '我住在上海。'], '火星上的天气怎么样')).toBe(1);
    const contents = ['用户说今天天气不错。', '用户早上跑步。'];
    const weather = (await textPart(mars, contents, contents[0] as string)) as number;
    const morning = (await textPart(mars, contents, contents[1] as string)) as number;
    // The best keyword hit holds 天 天气 气; the other only 上, and scores below it by BM25 too.
    expect(weather).toBeCloseTo(3 / marsTerms, 12);
    expect(morning).toBeGreaterThan(0);
    expect(morning).toBeLessThan(1 / marsTerms);
  });

  it('leaves an English query on the best match scale: a lone word match is still 1', async () => {
    expect(await textPart('What is the weather on Mars?', ['I live near Mars Street.', 'I like coffee.'], 'I live near Mars Street.')).toBe(1);
  });
});

describe('queryTermCoverage', () => {
  it('is undefined for a query without Chinese, Japanese or Korean terms (function characters alone are none)', () => {
    expect(queryTermCoverage('What is the weather like on Mars?')).toBeUndefined();
    expect(queryTermCoverage('的了吗？')).toBeUndefined();
  });

  it('gives the share of the query terms a text holds, CJK terms as substrings, others as terms (stemmed)', () => {
    const coverage = queryTermCoverage('火星上的天气怎么样？') as (text: string) => number;
    expect(coverage('我住在上海。')).toBeCloseTo(1 / 11, 12);
    expect(coverage('火星上的天气怎么样')).toBe(1);
    expect(coverage('I like coffee')).toBe(0);
    // Mixed: 跑 跑步 步 and "run" (from running); the text's "runs" stems to run too.
    const mixed = queryTermCoverage('跑步 running') as (text: string) => number;
    expect(mixed('She runs every morning')).toBe(1 / 4);
    expect(mixed('我每天跑步, she runs')).toBe(1);
    // NFKC and case, as tokenize: full-width Ｒｕｎｓ is runs.
    expect(mixed('Ｒｕｎｓ')).toBe(1 / 4);
  });
});
