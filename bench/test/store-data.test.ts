import { createDefaultEmbedder } from '@memloom/embeddings';
import { describe, expect, it } from 'vitest';
import { dataset, DIMENSION } from '../src/store-data.js';

describe('store bench data', () => {
  it("uses the default embedder's dimension, so a scan costs what it costs users", () => {
    expect(DIMENSION).toBe(createDefaultEmbedder().dimension);
  });

  it('gives memories distinct random ids shaped like randomUUID, in no relation to the order they are written in', () => {
    const ids = dataset(2_000).records.map((record) => record.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const sorted = [...ids].sort();
    const inPlace = ids.filter((id, index) => sorted[index] === id).length;
    expect(inPlace).toBeLessThan(20);
    expect(dataset(2_000).records.map((record) => record.id)).toEqual(ids);
  });
});
