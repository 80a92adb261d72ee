import { describe, expect, it } from 'vitest';
import { documentVector, queryVector, termIndex } from '../src/sparse-text.js';

const PARAMETERS = { k1: 1.2, b: 0.75, averageLength: 4 };

describe('BM25 sparse vectors', () => {
  it('weigh a term by saturated, length-normalized frequency', () => {
    // "coffee coffee tea tea": 4 terms = the average length, so the norm is k1.
    const vector = documentVector('coffee coffee tea tea', PARAMETERS)!;
    const weight = vector.values[vector.indices.indexOf(termIndex('coffe'))];
    expect(weight).toBeCloseTo((2 * 2.2) / (2 + 1.2), 10);
    // The same frequency in a longer text weighs less.
    const longer = documentVector('coffee coffee tea tea milk sugar cream honey', PARAMETERS)!;
    expect(longer.values[longer.indices.indexOf(termIndex('coffe'))]).toBeLessThan(weight as number);
  });

  it('hold one sorted dimension per distinct term, Chinese characters and pairs included', () => {
    const vector = documentVector('我喜欢咖啡', PARAMETERS)!;
    expect(vector.indices).toEqual([...vector.indices].sort((a, b) => a - b));
    expect(new Set(vector.indices).size).toBe(vector.indices.length);
    expect(vector.indices).toContain(termIndex('咖啡'));
    expect(queryVector('咖啡')!.indices).toEqual([termIndex('咖'), termIndex('咖啡'), termIndex('啡')].sort((a, b) => a - b));
  });

  it('give nothing for text without terms', () => {
    expect(documentVector('the and of', PARAMETERS)).toBeUndefined();
    expect(queryVector('"*:')).toBeUndefined();
  });

  it('map terms to unsigned 32-bit dimensions deterministically', () => {
    expect(termIndex('coffe')).toBe(termIndex('coffe'));
    expect(termIndex('coffe')).not.toBe(termIndex('tea'));
    for (const term of ['a', '咖啡', 'zzzzzz']) {
      expect(Number.isInteger(termIndex(term)) && termIndex(term) >= 0 && termIndex(term) < 2 ** 32).toBe(true);
    }
  });
});
