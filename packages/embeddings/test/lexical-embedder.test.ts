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
    // v2: texts without terms are no longer one shared direction.
    expect(embedder.id).toBe(`memloom/lexical-v2:t${TOKENIZER_VERSION}:w768:c256x3@0.3`);
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

  it('gives texts without terms features of their own: stopwords, emoji, symbols', async () => {
    // Each pair used to share one fixed direction (similarity 1), so memloom merged them.
    for (const [a, b] of [['🎉', '🐶'], ['🎉🎉🎉 🎂', '😢💔'], ['!!!', '???'], ['It is', 'I am'], ['的', '了'], ['', '🐶']] as const) {
      expect(await similarity(a, b), `${a} / ${b}`).toBeLessThan(0.2);
    }
    // The same emoji, repeated or spaced out, stays close; the same words in another order are the same text.
    expect(await similarity('🎉', '🎉🎉')).toBeGreaterThan(0.9);
    expect(await similarity('🎉 🎂', '🎉🎂')).toBeGreaterThan(0.9);
    expect(await similarity('is it', 'It is')).toBeGreaterThan(0.9);
    for (const vector of await embedder.embed(['🎉', '!!!', 'It is', '\u0301'])) expect(Math.hypot(...(vector as number[]))).toBeCloseTo(1, 10);
  });

  it('gives the empty and blank texts one fixed direction', async () => {
    const [empty, blank, newlines] = await embedder.embed(['', '   ', '\n\t']);
    expect(blank).toEqual(empty);
    expect(newlines).toEqual(empty);
    expect(Math.hypot(...(empty as number[]))).toBeCloseTo(1, 10);
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
