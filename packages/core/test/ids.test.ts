import { describe, expect, it } from 'vitest';
import { createMemory, timeOrderedId } from '../src/index.js';
import { createFakeClock, createInMemoryStore, createTestEmbedder, seededRandom } from '../src/testing/index.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The milliseconds in a version 7 id's first 48 bits. */
const timeOf = (id: string): number => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('timeOrderedId', () => {
  it('makes version 7 UUIDs that carry their time and sort by it', () => {
    const times = [0, 1, 255, 256, 1_732_000_000_000, 1_732_000_000_001, 2 ** 48 - 1];
    const ids = times.map((time) => timeOrderedId(time));
    for (const [index, id] of ids.entries()) {
      expect(id).toMatch(V7);
      expect(timeOf(id)).toBe(times[index]);
    }
    expect([...ids].sort()).toEqual(ids);
    // Fractions of a millisecond are dropped.
    expect(timeOf(timeOrderedId(1000.9))).toBe(1000);
  });

  it('gives distinct ids within one millisecond, and the same ids from the same random bytes', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => timeOrderedId(1_732_000_000_000)));
    expect(ids.size).toBe(10_000);
    const seeded = () => {
      const next = seededRandom(5);
      return (bytes: Uint8Array) => bytes.forEach((_, index) => (bytes[index] = Math.floor(next() * 256)));
    };
    const first = seeded();
    const second = seeded();
    expect(timeOrderedId(42, first)).toBe(timeOrderedId(42, second));
    expect(timeOrderedId(42, first)).not.toBe(timeOrderedId(42, seeded()));
  });

  it('refuses a time it cannot hold, with a typed error', () => {
    for (const time of [-1, 2 ** 48, Number.NaN, Number.POSITIVE_INFINITY, '1' as unknown as number]) {
      expect(() => timeOrderedId(time)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    }
    // A string is shown quoted, as given, not as if it were the number.
    expect(() => timeOrderedId('1' as unknown as number)).toThrow('got "1"');
  });

  it("is createMemory's id generator, at the memory's clock", async () => {
    const clock = createFakeClock(Date.parse('2026-01-01T00:00:00Z'));
    const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder(), clock });
    const first = await memory.add('I keep bees on the roof', { scope: { userId: 'u' } });
    clock.advance(5_000);
    const second = await memory.add('My sister lives in Lisbon', { scope: { userId: 'u' } });
    expect(first.memory.id).toMatch(V7);
    expect(timeOf(first.memory.id)).toBe(Date.parse('2026-01-01T00:00:00Z'));
    expect(timeOf(second.memory.id)).toBe(Date.parse('2026-01-01T00:00:05Z'));
    expect(first.memory.id < second.memory.id).toBe(true);
  });
});
