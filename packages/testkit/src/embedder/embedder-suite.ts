import type { Embedder } from '@memloom/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

export interface EmbedderSuiteOptions {
  /** Shown in the test names, e.g. `lexical`. */
  name: string;
  /** A fresh embedder; called once for the suite and once more for the determinism check. */
  create: () => Embedder | Promise<Embedder>;
  /** Largest allowed |a − b| when two vectors should be equal (batching may reorder float sums). @default 1e-5 */
  tolerance?: number;
  /**
   * A text longer than the model reads; the embedder must still return one
   * valid vector (truncating or pooling as it sees fit). @default 20,000 characters
   */
  longText?: string;
  /**
   * Whether texts that mean the same should score above texts that do not
   * (`coffee` close to `coffee`, far from `tax`). Off for toy models whose
   * vectors mean nothing. @default true
   */
  meaningful?: boolean;
  /** Skip the whole suite, saying why (e.g. a model that is not installed). */
  skip?: string | false;
  /**
   * Time each case (and loading) may take before vitest gives up, in ms. Generous on purpose:
   * speed belongs in the benchmarks, and CI machines are shared.
   * @default 60000
   */
  timeout?: number;
}

const SAMPLES = [
  'The user drinks black coffee every morning.',
  'Remind me to call my mother on Sunday evening.',
  '用户每天早上喝一杯美式咖啡。',
  'Meeting moved to 3pm 🕒 — bring the Q3 report 📊',
  '我的 GitHub 用户名是 lin-wei，常用 TypeScript。',
  'a',
];

/**
 * The conformance suite every embedder passes: fixed dimension, unit
 * vectors, determinism, a batch equal to its items one by one, empty and
 * very long text, emoji and CJK, and concurrent calls.
 *
 * ```ts
 * testEmbedder({ name: 'lexical', create: () => createLexicalEmbedder() });
 * ```
 */
export function testEmbedder(options: EmbedderSuiteOptions): void {
  const tolerance = options.tolerance ?? 1e-5;
  const longText = options.longText ?? 'memory '.repeat(2_000) + '长文本'.repeat(2_000);
  const skip = options.skip || false;
  const timeout = options.timeout ?? 60_000;

  describe.skipIf(!!skip)(`embedder conformance: ${options.name}${skip ? ` (skipped: ${skip})` : ''}`, { timeout }, () => {
    let embedder: Embedder;

    beforeAll(async () => {
      embedder = await options.create();
    }, timeout);

    afterAll(async () => {
      await embedder?.close?.();
    }, timeout);

    it('has a string id and a positive whole dimension', () => {
      expect(typeof embedder.id).toBe('string');
      expect(embedder.id.length).toBeGreaterThan(0);
      expect(Number.isInteger(embedder.dimension)).toBe(true);
      expect(embedder.dimension).toBeGreaterThan(0);
    });

    it('returns one vector per text, in order, each of the declared dimension', async () => {
      const vectors = await embedder.embed(SAMPLES);
      expect(vectors).toHaveLength(SAMPLES.length);
      for (const vector of vectors) expectValid(vector, embedder.dimension);
      // Different texts get different vectors, so the order is observable.
      expect(maxDifference(vectors[0] as number[], vectors[1] as number[])).toBeGreaterThan(tolerance);
    });

    it('returns one vector per text, repeated texts included, each in its place', async () => {
      const [x, y] = [SAMPLES[1] as string, SAMPLES[2] as string];
      const [alone] = await embedder.embed([x]);
      const [other] = await embedder.embed([y]);
      const cases: string[][] = [['', x, ''], [x, x], [x, y, x, x], ['', '', ''], [y, '', y, x]];
      for (const texts of cases) {
        for (const purpose of ['document', 'query'] as const) {
          const vectors = await embedder.embed(texts, { purpose });
          expect(vectors, `${purpose} ${JSON.stringify(texts)}`).toHaveLength(texts.length);
          for (const vector of vectors) expectValid(vector, embedder.dimension);
          texts.forEach((text, index) => {
            const first = texts.indexOf(text);
            expect(maxDifference(vectors[index] as number[], vectors[first] as number[]), `${purpose} ${JSON.stringify(texts)}[${index}]`).toBeLessThanOrEqual(tolerance);
          });
        }
      }
      const [a, b, c, d] = await embedder.embed([x, y, x, y]);
      expect(maxDifference(a as number[], alone as number[])).toBeLessThanOrEqual(tolerance);
      expect(maxDifference(b as number[], other as number[])).toBeLessThanOrEqual(tolerance);
      expect(maxDifference(c as number[], alone as number[])).toBeLessThanOrEqual(tolerance);
      expect(maxDifference(d as number[], other as number[])).toBeLessThanOrEqual(tolerance);
    });

    it('returns an empty list for no texts', async () => {
      expect(await embedder.embed([])).toEqual([]);
    });

    it('returns unit vectors', async () => {
      for (const vector of await embedder.embed(SAMPLES)) expect(Math.abs(norm(vector) - 1)).toBeLessThan(1e-3);
    });

    it('is deterministic, across calls and across instances', async () => {
      const first = await embedder.embed(SAMPLES);
      const second = await embedder.embed(SAMPLES);
      const other = await options.create();
      try {
        const third = await other.embed(SAMPLES);
        expect(other.id).toBe(embedder.id);
        first.forEach((vector, index) => {
          expect(maxDifference(vector, second[index] as number[])).toBeLessThanOrEqual(tolerance);
          expect(maxDifference(vector, third[index] as number[])).toBeLessThanOrEqual(tolerance);
        });
      } finally {
        await other.close?.();
      }
    });

    it('embeds a batch exactly as it embeds the items one by one', async () => {
      const batch = await embedder.embed(SAMPLES);
      for (const [index, text] of SAMPLES.entries()) {
        const [single] = await embedder.embed([text]);
        expect(maxDifference(batch[index] as number[], single as number[])).toBeLessThanOrEqual(tolerance);
      }
    });

    it('gives the empty string and whitespace a valid vector', async () => {
      const vectors = await embedder.embed(['', '   ', '\n\t']);
      expect(vectors).toHaveLength(3);
      for (const vector of vectors) {
        expectValid(vector, embedder.dimension);
        expect(Math.abs(norm(vector) - 1)).toBeLessThan(1e-3);
      }
    });

    it('keeps the rows of other texts in place around an empty one', async () => {
      const [alone] = await embedder.embed([SAMPLES[1] as string]);
      const around = await embedder.embed(['', SAMPLES[1] as string, '']);
      expect(maxDifference(around[1] as number[], alone as number[])).toBeLessThanOrEqual(tolerance);
    });

    it('embeds a very long text', async () => {
      const [vector] = await embedder.embed([longText]);
      expectValid(vector, embedder.dimension);
      expect(Math.abs(norm(vector as number[]) - 1)).toBeLessThan(1e-3);
    });

    it('embeds emoji, CJK and mixed scripts', async () => {
      const texts = ['🎉🎉🎉', '🙂 ok', '我喜欢喝咖啡', '私はコーヒーが好きです', '커피를 좋아해요', 'café naïve Ünïcödé', 'mixed 中英 text'];
      const vectors = await embedder.embed(texts);
      expect(vectors).toHaveLength(texts.length);
      for (const vector of vectors) {
        expectValid(vector, embedder.dimension);
        expect(Math.abs(norm(vector) - 1)).toBeLessThan(1e-3);
      }
    });

    it('returns unit vectors of the declared dimension for queries too, empty and long text included', async () => {
      const texts = [...SAMPLES, '', '   ', longText];
      const vectors = await embedder.embed(texts, { purpose: 'query' });
      expect(vectors).toHaveLength(texts.length);
      for (const [index, vector] of vectors.entries()) {
        expectValid(vector, embedder.dimension);
        expect(Math.abs(norm(vector) - 1), `query vector ${index}`).toBeLessThan(1e-3);
      }
    });

    it('embeds a batch of queries exactly as it embeds them one by one', async () => {
      const batch = await embedder.embed(SAMPLES, { purpose: 'query' });
      expect(batch).toHaveLength(SAMPLES.length);
      for (const [index, text] of SAMPLES.entries()) {
        const [single] = await embedder.embed([text], { purpose: 'query' });
        expect(maxDifference(batch[index] as number[], single as number[]), `query ${index}`).toBeLessThanOrEqual(tolerance);
      }
      const [alone] = await embedder.embed([SAMPLES[1] as string], { purpose: 'query' });
      const around = await embedder.embed(['', SAMPLES[1] as string, ''], { purpose: 'query' });
      expect(around).toHaveLength(3);
      expect(maxDifference(around[1] as number[], alone as number[])).toBeLessThanOrEqual(tolerance);
    });

    it('accepts a purpose and stays deterministic for each', async () => {
      const [query] = await embedder.embed([SAMPLES[0] as string], { purpose: 'query' });
      const [again] = await embedder.embed([SAMPLES[0] as string], { purpose: 'query' });
      expectValid(query, embedder.dimension);
      expect(maxDifference(query as number[], again as number[])).toBeLessThanOrEqual(tolerance);
    });

    it('gives concurrent calls the same vectors as sequential ones', async () => {
      const sequential: number[][] = [];
      for (const text of SAMPLES) sequential.push(...(await embedder.embed([text])));
      const concurrent = await Promise.all([
        ...SAMPLES.map((text) => embedder.embed([text])),
        embedder.embed(SAMPLES),
        embedder.embed([...SAMPLES].reverse()),
      ]);
      SAMPLES.forEach((_, index) => {
        expect(maxDifference(concurrent[index]?.[0] as number[], sequential[index] as number[])).toBeLessThanOrEqual(tolerance);
        expect(maxDifference(concurrent[SAMPLES.length]?.[index] as number[], sequential[index] as number[])).toBeLessThanOrEqual(tolerance);
        expect(maxDifference(concurrent[SAMPLES.length + 1]?.[SAMPLES.length - 1 - index] as number[], sequential[index] as number[])).toBeLessThanOrEqual(tolerance);
      });
    });

    it.skipIf(options.meaningful === false)('scores a text closer to a rewording than to an unrelated text', async () => {
      const [anchor, near, far] = await embedder.embed([
        'The user drinks coffee every morning.',
        'Every morning the user has a coffee.',
        'Quarterly tax filings are due in April.',
      ]);
      expect(dot(anchor as number[], near as number[])).toBeGreaterThan(dot(anchor as number[], far as number[]));
    });

    it('rejects input that is not an array of strings', async () => {
      await expect(embedder.embed('text' as unknown as string[])).rejects.toThrow();
      await expect(embedder.embed([42 as unknown as string])).rejects.toThrow();
    });
  });
}

function expectValid(vector: readonly number[] | undefined, dimension: number): void {
  expect(Array.isArray(vector)).toBe(true);
  expect(vector).toHaveLength(dimension);
  for (const value of vector as number[]) expect(Number.isFinite(value)).toBe(true);
}

function norm(vector: readonly number[]): number {
  return Math.sqrt(dot(vector, vector));
}

function dot(a: readonly number[], b: readonly number[]): number {
  let sum = 0;
  for (let index = 0; index < a.length; index++) sum += (a[index] as number) * (b[index] as number);
  return sum;
}

function maxDifference(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let max = 0;
  for (let index = 0; index < a.length; index++) max = Math.max(max, Math.abs((a[index] as number) - (b[index] as number)));
  return max;
}
