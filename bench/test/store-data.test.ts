import { createDefaultEmbedder } from '@memloom/embeddings';
import { describe, expect, it } from 'vitest';
import { dataset, DIMENSION } from '../src/store-data.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('store bench data', () => {
  it("uses the default embedder's dimension, so a scan costs what it costs users", () => {
    expect(DIMENSION).toBe(createDefaultEmbedder().dimension);
  });

  it('writes memories as add leaves them: oldest first, with the time-ordered ids add gives', () => {
    const records = dataset(2_000).records;
    const ids = records.map((record) => record.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const record of records) {
      expect(record.id).toMatch(V7);
      expect(Number.parseInt(record.id.replaceAll('-', '').slice(0, 12), 16)).toBe(Date.parse(record.createdAt));
    }
    const ages = records.map((record) => record.createdAt);
    expect([...ages].sort()).toEqual(ages);
    expect(dataset(2_000).records.map((record) => record.id)).toEqual(ids);
  });

  it('writes the same memories shuffled with random v4 ids, in no relation to their age or write order', () => {
    const written = dataset(2_000).records;
    const shuffled = dataset(2_000, 1, 'shuffled').records;
    const ids = shuffled.map((record) => record.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(V4);
    const sorted = [...ids].sort();
    expect(ids.filter((id, index) => sorted[index] === id).length).toBeLessThan(20);
    const ages = shuffled.map((record) => record.createdAt);
    const sortedAges = [...ages].sort();
    expect(ages.filter((age, index) => sortedAges[index] === age).length).toBeLessThan(20);
    // The same memories either way: contents, ages, users and sources.
    const key = (record: (typeof written)[number]) => `${record.sources[0]} ${record.createdAt} ${record.scope.userId} ${record.content}`;
    expect(shuffled.map(key).sort()).toEqual(written.map(key).sort());
  });
});
