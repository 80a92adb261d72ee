import { cosineSimilarity, SEGMENT_PIECE_CHARS } from '@memloom/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLexicalEmbedder, wordVectorOf } from '../src/index.js';

describe('long texts in the offline embedders', () => {
  afterEach(() => vi.restoreAllMocks());

  it('give every segmenter call at most SEGMENT_PIECE_CHARS characters, so a long text takes linear time', async () => {
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    const long = 'The quick brown fox jumps over the lazy dog. '.repeat(1000); // 45,000 characters
    const noSpace = 'coffee/tea/'.repeat(2000); // 22,000 characters, no whitespace at all
    const emoji = '🎉 🎂 '.repeat(3000); // 18,000 characters without a term: the lexical embedder segments its graphemes
    expect(wordVectorOf(long)).toBeDefined();
    expect(wordVectorOf(noSpace)).toBeDefined();
    await createLexicalEmbedder().embed([emoji]);
    const lengths = segment.mock.calls.map(([text]) => text.length);
    expect(lengths.reduce((sum, length) => sum + length, 0)).toBeGreaterThanOrEqual(long.length + noSpace.length + emoji.length);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(SEGMENT_PIECE_CHARS);
  });

  it('read a long stretch without whitespace word by word: it is cut after punctuation, not inside a word', () => {
    // 2,200 characters: a piece must end inside the first 2,000, where only slashes end words.
    const one = wordVectorOf('coffee/tea/');
    for (const text of ['coffee/tea/'.repeat(200), 'coffee tea '.repeat(200)]) {
      expect(cosineSimilarity(Array.from(wordVectorOf(text) ?? []), Array.from(one ?? [])), text.slice(0, 11)).toBeGreaterThan(1 - 1e-9);
    }
  });
});
