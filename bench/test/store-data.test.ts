import { createDefaultEmbedder } from '@memloom/embeddings';
import { describe, expect, it } from 'vitest';
import { DIMENSION } from '../src/store-data.js';

describe('store bench data', () => {
  it("uses the default embedder's dimension, so a scan costs what it costs users", () => {
    expect(DIMENSION).toBe(createDefaultEmbedder().dimension);
  });
});
