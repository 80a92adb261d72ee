import { describe, expect, it } from 'vitest';
import { PlainBm25, plainTokens } from '../src/peers/plain-bm25.js';

describe('plainTokens', () => {
  it('lowercases, splits on anything but letters and digits, and drops NLTK stopwords without stemming', () => {
    expect(plainTokens("Caroline: I'm running to the LGBTQ support-group, don't wait!")).toEqual(['caroline', 'running', 'lgbtq', 'support', 'group', 'wait']);
  });

  it('keeps every word when given an empty stopword list', () => {
    expect(plainTokens('The cat', new Set())).toEqual(['the', 'cat']);
  });
});

describe('PlainBm25', () => {
  it('ranks the document sharing the rarer query term first, then equal scores in insertion order', () => {
    const index = new PlainBm25();
    index.add('a', 'coffee in the morning');
    index.add('b', 'coffee with a friend');
    index.add('c', 'tea in the garden with a friend');
    expect(index.search('garden coffee', 3).map((hit) => hit.id)).toEqual(['c', 'a', 'b']);
  });

  it('prefers the shorter of two documents with the same term frequency (length normalization)', () => {
    const index = new PlainBm25();
    index.add('long', 'marathon training plan with long runs tempo runs intervals and rest days');
    index.add('short', 'marathon training');
    expect(index.search('marathon', 2).map((hit) => hit.id)).toEqual(['short', 'long']);
  });

  it('returns only documents that share a term, best first, at most limit', () => {
    const index = new PlainBm25();
    index.add('a', 'red apple');
    index.add('b', 'green apple');
    index.add('c', 'blue sky');
    const hits = index.search('apple', 5);
    expect(hits.map((hit) => hit.id).sort()).toEqual(['a', 'b']);
    expect(index.search('apple', 1)).toHaveLength(1);
    expect(index.search('the', 5)).toEqual([]);
    expect(index.size).toBe(3);
  });

  it('matches the textbook formula: idf ln(1 + (N - n + 0.5) / (n + 0.5)), k1 1.2, b 0.75', () => {
    const index = new PlainBm25();
    index.add('a', 'apple pie');
    index.add('b', 'banana');
    // N 2, n 1, |d| 2, avgdl 1.5, tf 1
    const idf = Math.log(1 + (2 - 1 + 0.5) / (1 + 0.5));
    const expected = (idf * 1 * 2.2) / (1 + 1.2 * (1 - 0.75 + (0.75 * 2) / 1.5));
    expect(index.search('apple', 1)[0]?.score).toBeCloseTo(expected, 10);
  });
});
