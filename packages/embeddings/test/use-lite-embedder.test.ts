import { cosineSimilarity } from '@memloom/core';
import { testEmbedder } from '@memloom/testkit';
import { describe, expect, it } from 'vitest';
import { createUseLiteEmbedder } from '../src/index.js';

// Batches of USE-lite differ from single runs by float rounding only.
testEmbedder({ name: 'USE-lite', create: () => createUseLiteEmbedder(), tolerance: 1e-4 });

describe('USE-lite embedder', () => {
  const embedder = createUseLiteEmbedder({ batchSize: 2 });

  it('has 512 dimensions and ranks paraphrases above unrelated text', async () => {
    const [anchor, paraphrase, unrelated] = await embedder.embed([
      'How old is your daughter?',
      'What is the age of your child?',
      'The stock market fell sharply today.',
    ]);
    expect(embedder.dimension).toBe(512);
    expect(cosineSimilarity(anchor as number[], paraphrase as number[])).toBeGreaterThan(cosineSimilarity(anchor as number[], unrelated as number[]) + 0.2);
  });

  it('splits inputs larger than batchSize and keeps their order', async () => {
    const texts = ['one apple', 'two pears', 'three plums', 'four figs', 'five limes'];
    const together = await embedder.embed(texts);
    for (const [index, text] of texts.entries()) {
      const [alone] = await embedder.embed([text]);
      expect(cosineSimilarity(together[index] as number[], alone as number[])).toBeGreaterThan(0.9999);
    }
  });

  it('maps all Chinese sentences close together, which is why the default routes CJK elsewhere', async () => {
    const [coffee, passport] = await embedder.embed(['用户每天早上喝咖啡', '护照明年六月到期']);
    expect(cosineSimilarity(coffee as number[], passport as number[])).toBeGreaterThan(0.85);
  });

  it('reads only the first maxCharacters of a text, and says so in its id', async () => {
    const short = createUseLiteEmbedder({ maxCharacters: 40 });
    const head = 'The user keeps a pet cat called Potato. ';
    const [cut, whole] = await short.embed([head + 'Quarterly tax filings are due in April.', head]);
    expect(cosineSimilarity(cut as number[], whole as number[])).toBeGreaterThan(0.9999);
    expect(short.id).not.toBe(embedder.id);
  });

  it('rejects a bad batchSize or maxCharacters', () => {
    expect(() => createUseLiteEmbedder({ batchSize: 0 })).toThrow(/batchSize/);
    expect(() => createUseLiteEmbedder({ maxCharacters: 0 })).toThrow(/maxCharacters/);
  });

  it('rejects null options with INVALID_OPTIONS; undefined means the defaults', () => {
    expect(() => createUseLiteEmbedder(null as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(createUseLiteEmbedder(undefined).id).toBe('energetic-ai/use-lite-en@0.2');
  });
});
