import { cosineSimilarity, MemloomError, type Embedder } from '@memloom/core';
import { createTestEmbedder } from '@memloom/core/testing';
import { testEmbedder } from '@memloom/testkit';
import { describe, expect, it } from 'vitest';
import { cjkShare, createCachedEmbedder, createCompositeEmbedder, createLexicalEmbedder, createScriptRoutedEmbedder } from '../src/index.js';

testEmbedder({
  name: 'composite (test + lexical)',
  create: () => createCompositeEmbedder([{ embedder: createTestEmbedder(), weight: 1 }, { embedder: createLexicalEmbedder(), weight: 3 }]),
  tolerance: 1e-12,
});
testEmbedder({
  name: 'script-routed (test for Latin, lexical for CJK)',
  create: () => createScriptRoutedEmbedder({ latin: createTestEmbedder(), cjk: createLexicalEmbedder() }),
  tolerance: 1e-12,
});

describe('composite embedder', () => {
  it('has cosine equal to the weighted mean of its parts', async () => {
    const first = createTestEmbedder({ dimension: 16 });
    const second = createLexicalEmbedder({ wordDimension: 64, charDimension: 0 });
    const composite = createCompositeEmbedder([{ embedder: first, weight: 1 }, { embedder: second, weight: 3 }]);
    const texts = ['coffee every morning', 'morning tea and coffee'];
    const [a, b] = await composite.embed(texts);
    const [a1, b1] = await first.embed(texts);
    const [a2, b2] = await second.embed(texts);
    const expected = 0.25 * cosineSimilarity(a1 as number[], b1 as number[]) + 0.75 * cosineSimilarity(a2 as number[], b2 as number[]);
    expect(cosineSimilarity(a as number[], b as number[])).toBeCloseTo(expected, 10);
    expect(composite.dimension).toBe(16 + 64);
  });

  it('rejects no parts and non-positive weights', () => {
    expect(() => createCompositeEmbedder([])).toThrow(MemloomError);
    expect(() => createCompositeEmbedder([{ embedder: createTestEmbedder(), weight: 0 }])).toThrow(/positive weight/);
  });

  it('refuses an unknown key in a part, naming it, before reporting the part incomplete', () => {
    const embedder = createTestEmbedder();
    expect(() => createCompositeEmbedder([{ embedder, weight: 1 }, { embedder, weight: 1, scale: 2 } as never])).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('createCompositeEmbedder: unknown option "parts[1].scale" (known: embedder, weight)') }),
    );
    expect(() => createCompositeEmbedder([{ embedder, wieght: 1 } as never])).toThrow(/unknown option "parts\[0\]\.wieght"/);
  });

  it('rejects null options with INVALID_OPTIONS; undefined means the defaults', () => {
    const parts = [{ embedder: createTestEmbedder(), weight: 1 }];
    expect(() => createCompositeEmbedder(parts, null as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(createCompositeEmbedder(parts, undefined).id).toBe('composite(memloom/test-embedder*1)');
  });

  it('reports a part that returns the wrong dimension', async () => {
    const liar: Embedder = { id: 'liar', dimension: 8, embed: async (texts) => texts.map(() => [1, 0]) };
    const composite = createCompositeEmbedder([{ embedder: liar, weight: 1 }]);
    await expect(composite.embed(['x'])).rejects.toMatchObject({ code: 'INVALID_EMBEDDING' });
  });

  it('reports a part that returns a non-finite value, naming the part', async () => {
    const broken: Embedder = { id: 'broken-part', dimension: 2, embed: async (texts) => texts.map(() => [1, Number.NaN]) };
    const composite = createCompositeEmbedder([{ embedder: broken, weight: 1 }, { embedder: createTestEmbedder({ dimension: 4 }), weight: 1 }]);
    const error = await composite.embed(['x']).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'INVALID_EMBEDDING', details: { index: 1 } });
    expect((error as Error).message).toContain('broken-part returned a vector with a non-finite value');
  });
});

describe('script-routed embedder', () => {
  it('measures the CJK share of a text in words', () => {
    expect(cjkShare('The user drinks coffee')).toBe(0);
    expect(cjkShare('用户每天喝咖啡')).toBe(1);
    expect(cjkShare('')).toBe(0);
    const mixed = cjkShare('我的 GitHub 用户名是 lin-wei');
    expect(mixed).toBeGreaterThan(0.3);
    expect(mixed).toBeLessThan(0.7);
  });

  it('sends each text only to the embedder of its script', async () => {
    const latin = createTestEmbedder({ id: 'latin', dimension: 8 });
    const cjk = createTestEmbedder({ id: 'cjk', dimension: 8 });
    const routed = createScriptRoutedEmbedder({ latin, cjk });
    const [english, chinese, mixed] = await routed.embed(['drinks coffee', '喝咖啡', 'drinks 咖啡']);
    expect(latin.calls).toEqual([['drinks coffee', 'drinks 咖啡']]);
    expect(cjk.calls).toEqual([['喝咖啡', 'drinks 咖啡']]);
    expect((english as number[]).slice(8).every((value) => value === 0)).toBe(true);
    expect((chinese as number[]).slice(0, 8).every((value) => value === 0)).toBe(true);
    expect((mixed as number[]).some((value, index) => index < 8 && value !== 0)).toBe(true);
    expect((mixed as number[]).some((value, index) => index >= 8 && value !== 0)).toBe(true);
    // An English and a Chinese text share no part: they are orthogonal.
    expect(cosineSimilarity(english as number[], chinese as number[])).toBe(0);
  });

  it('needs both embedders', () => {
    expect(() => createScriptRoutedEmbedder({ latin: createTestEmbedder() } as never)).toThrow(/latin and a cjk/);
  });
});

describe('an embedder of parts that read a query otherwise than a document', () => {
  const reading = (queryReading: string): Embedder => ({ ...createTestEmbedder({ dimension: 8 }), id: `reads-${queryReading}`, queryReading });

  it('names their queryReading, so that a cache keys its queries by it and refuses sharePurposes', () => {
    const composite = createCompositeEmbedder([{ embedder: reading('r1'), weight: 1 }, { embedder: createTestEmbedder(), weight: 1 }]);
    const routed = createScriptRoutedEmbedder({ latin: reading('a'), cjk: reading('b') });
    expect(composite.queryReading).toBe('r1');
    expect(routed.queryReading).toBe('a+b');
    for (const embedder of [composite, routed]) {
      expect(() => createCachedEmbedder(embedder, { sharePurposes: true })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('sharePurposes') }));
    }
    // Parts that read both alike: no queryReading, and a cache may share purposes.
    const plain = createScriptRoutedEmbedder({ latin: createTestEmbedder(), cjk: createLexicalEmbedder() });
    expect(plain.queryReading).toBeUndefined();
    expect(() => createCachedEmbedder(plain, { sharePurposes: true })).not.toThrow();
  });
});
