import { cosineSimilarity, MemloomError, TOKENIZER_VERSION } from '@memloom/core';
import { testEmbedder } from '@memloom/testkit';
import { describe, expect, it } from 'vitest';
import { createLexicalEmbedder } from '../src/index.js';

testEmbedder({ name: 'lexical', create: () => createLexicalEmbedder(), tolerance: 0 });
testEmbedder({ name: 'lexical without character n-grams', create: () => createLexicalEmbedder({ charDimension: 0 }), tolerance: 0 });

describe('lexical embedder', () => {
  const embedder = createLexicalEmbedder();
  const similarity = async (a: string, b: string) => {
    const [x, y] = await embedder.embed([a, b]);
    return cosineSimilarity(x as number[], y as number[]);
  };

  it('has the dimension of its two channels and an id that names its settings', () => {
    expect(embedder.dimension).toBe(768 + 256);
    expect(createLexicalEmbedder({ wordDimension: 512, charDimension: 0 }).dimension).toBe(512);
    expect(createLexicalEmbedder({ charWeight: 0.5 }).id).not.toBe(embedder.id);
    // The tokenizer's version is part of the vector space: a tokenizer change changes the id.
    expect(embedder.id).toContain(`:t${TOKENIZER_VERSION}:`);
  });

  it('gives identical texts similarity 1 and texts sharing no term about 0', async () => {
    expect(await similarity('The user likes green tea', 'The user likes green tea')).toBeCloseTo(1, 10);
    expect(Math.abs(await similarity('quarterly taxes', 'purple elephant'))).toBeLessThan(0.2);
  });

  it('matches word forms through stemming and n-grams', async () => {
    const related = await similarity('She paints landscapes', 'painting a landscape');
    const unrelated = await similarity('She paints landscapes', 'filing the tax return');
    expect(related).toBeGreaterThan(0.5);
    expect(related).toBeGreaterThan(unrelated + 0.4);
  });

  it('matches Chinese by characters and bigrams, without a dictionary', async () => {
    const related = await similarity('用户每天早上喝咖啡', '他喜欢喝咖啡吗');
    const unrelated = await similarity('用户每天早上喝咖啡', '护照明年六月到期');
    expect(related).toBeGreaterThan(0.3);
    expect(related).toBeGreaterThan(unrelated + 0.2);
  });

  it('gives text with only short stopwords the fixed empty direction', async () => {
    const [a, b, empty] = await embedder.embed(['is it', 'a I', '']);
    expect(a).toEqual(empty);
    expect(b).toEqual(empty);
  });

  it.each([
    [{ wordDimension: 4 }, 'wordDimension'],
    [{ wordDimension: 100.5 }, 'wordDimension'],
    [{ charDimension: -1 }, 'charDimension'],
    [{ charNgramSize: 1 }, 'charNgramSize'],
    [{ charWeight: 1 }, 'charWeight'],
    [{ charWeight: Number.NaN }, 'charWeight'],
  ])('rejects bad options %j with INVALID_OPTIONS naming %s', (options, field) => {
    try {
      createLexicalEmbedder(options);
      expect.unreachable('should have thrown');
    } catch (error) {
      expect(MemloomError.hasCode(error, 'INVALID_OPTIONS')).toBe(true);
      expect((error as MemloomError).backend).toBe('embeddings');
      expect((error as Error).message).toContain(field);
    }
  });
});
