import { describe, expect, it } from 'vitest';
import { cosineSimilarity, createMemory, hasLoneSurrogate, type CreateMemoryOptions } from '../src/index.js';
import { axisVector, createFakeClock, createInMemoryStore, createTestEmbedder, vectorWithSimilarity } from '../src/testing/index.js';

const DIM = 16;
const DAY = 86_400_000;
const START = '2024-03-01T09:00:00.000Z';
const scope = { userId: 'a' };

function rig(vectors: Record<string, number[]>, options: Partial<CreateMemoryOptions> = {}) {
  const embedder = createTestEmbedder({ dimension: DIM, vectors });
  const clock = createFakeClock(START);
  const store = createInMemoryStore();
  const memory = createMemory({ store, embedder, clock, ...options });
  const at = (days: number) => clock.set(new Date(Date.parse(START) + days * DAY).toISOString());
  return { memory, clock, store, at };
}

const vectors = {
  'I live in Porto': axisVector(DIM, 0),
  'I live in Porto now': vectorWithSimilarity(DIM, 0, 1, 0.9),
  'I live near the river in Porto': vectorWithSimilarity(DIM, 0, 2, 0.7),
  'I bought a kayak': vectorWithSimilarity(DIM, 0, 3, 0.2),
};

describe('boosts and merges start from the weight and importance the decay rules give now', () => {
  // At 100 days the formula gives 1 / (1 + 0.01 · 100) = 0.5, whether or not a pass wrote it.
  for (const maintainFirst of [false, true]) {
    const label = maintainFirst ? 'after a maintenance pass' : 'with no pass since it was stored';
    it(`keep both: +30% of the gap from 0.5 (${label}), and the boost survives the next pass`, async () => {
      const { memory, at } = rig(vectors);
      const first = await memory.add('I live in Porto', { scope });
      at(100);
      if (maintainFirst) await memory.maintain();
      const result = await memory.add('I live near the river in Porto', { scope });
      expect(result.decision.strategy).toBe('keep_both');
      expect(result.boosted?.weight).toBeCloseTo(0.65, 6);
      await memory.maintain();
      expect((await memory.get(first.memory.id))?.weight).toBeCloseTo(0.65, 6);
    });

    it(`new memory: +0.1 from 0.5 (${label})`, async () => {
      const { memory, at } = rig(vectors);
      const first = await memory.add('I live in Porto', { scope });
      at(100);
      if (maintainFirst) await memory.maintain();
      const result = await memory.add('I bought a kayak', { scope });
      expect(result.decision.strategy).toBe('create_new');
      expect(result.boosted?.weight).toBeCloseTo(0.6, 6);
      await memory.maintain();
      expect((await memory.get(first.memory.id))?.weight).toBeCloseTo(0.6, 6);
    });

    it(`merge: +60% of the gap from 0.5 (${label})`, async () => {
      const { memory, at } = rig(vectors);
      await memory.add('I live in Porto', { scope });
      at(100);
      if (maintainFirst) await memory.maintain();
      const result = await memory.add('I live in Porto now', { scope });
      expect(result.decision.strategy).toBe('merge_update');
      expect(result.memory.weight).toBeCloseTo(0.8, 6);
      expect(result.memory.baseWeight).toBeCloseTo(0.8, 6);
    });
  }

  it('a restated fact is kept at least at the importance the new content would get alone', async () => {
    const { memory, at } = rig(vectors);
    await memory.add('I live in Porto', { scope });
    // 165 days: 23 whole weeks, 1 · 0.95^23 = 0.307 (deleted below 0.3 one week on, unless restated).
    at(165);
    await memory.maintain();
    expect((await memory.get((await memory.list({ scope }))[0]!.id))?.importance).toBe(0.307357);
    const merged = await memory.add('I live in Porto now', { scope });
    expect(merged.decision.strategy).toBe('merge_update');
    expect(merged.memory.importance).toBe(1);
    expect(merged.memory.baseImportance).toBe(1);
    at(172);
    const report = await memory.maintain();
    expect(report.deleted).toBe(0);
    expect((await memory.get(merged.memory.id))?.importance).toBe(0.95);
    // An importance given with the restatement counts when it is higher.
    expect((await memory.add('I live in Porto now', { scope, importance: 2.5 })).memory.importance).toBe(2.5);
  });

  it('an edit that refreshes the timestamp starts from the decayed weight, not the last one stored', async () => {
    const { memory, at } = rig(vectors);
    const first = await memory.add('I live in Porto', { scope });
    at(100);
    const edited = await memory.update(first.memory.id, { content: 'I live in Lisbon' }, { scope, refreshTimestamp: true });
    expect(edited.weight).toBe(0.5);
    expect(edited.baseWeight).toBe(0.5);
  });
});

describe('vectors of zeros', () => {
  it('an embedder that gives a vector of zeros is INVALID_EMBEDDING naming it, in add and search alike, and nothing is written', async () => {
    const { memory } = rig({ '🙂': new Array<number>(DIM).fill(0), '?!': new Array<number>(DIM).fill(0) });
    for (const attempt of [() => memory.add('🙂', { scope }), () => memory.add('🙂', { scope, merge: false }), () => memory.search('?!', { scope })]) {
      const error = await attempt().then(
        () => undefined,
        (caught: unknown) => caught as { code?: string; message?: string },
      );
      expect(error?.code).toBe('INVALID_EMBEDDING');
      expect(error?.message).toContain('a vector of zeros');
    }
    expect(await memory.count({ scope })).toBe(0);
  });

  it('quotes the start of a long text whose vector is zeros, cut before an emoji rather than through it', async () => {
    const text = `${'x'.repeat(39)}😀 and more words`;
    const { memory } = rig({ [text]: new Array<number>(DIM).fill(0) });
    const error = await memory.add(text, { scope }).then(
      () => undefined,
      (caught: unknown) => caught as { code?: string; message?: string },
    );
    expect(error?.code).toBe('INVALID_EMBEDDING');
    expect(error?.message).toContain(`a vector of zeros for "${'x'.repeat(39)}…":`);
    expect(hasLoneSurrogate(error?.message ?? '')).toBe(false);
  });

  it('a context whose vector is zeros is only blended in: the memory is stored, edited and found by its content', async () => {
    const { memory, store } = rig({ 'I adopted a dog named Rex': axisVector(DIM, 0), '👍': new Array<number>(DIM).fill(0), '🐶': new Array<number>(DIM).fill(0) });
    const added = await memory.add('I adopted a dog named Rex', { scope, context: '👍' });
    expect(await store.getVector(added.memory.id)).toEqual(axisVector(DIM, 0));
    // Restated without a context: the merge keeps the old one, embedded again.
    expect((await memory.add('I adopted a dog named Rex', { scope })).decision.strategy).toBe('merge_update');
    // An edit to another context whose vector is zeros embeds it, and keeps the content's vector.
    await memory.update(added.memory.id, { context: '🐶' }, { scope });
    expect(await store.getVector(added.memory.id)).toEqual(axisVector(DIM, 0));
    await memory.restore(added.memory.id, 1, { scope });
    expect(await store.getVector(added.memory.id)).toEqual(axisVector(DIM, 0));
    expect((await memory.search('I adopted a dog named Rex', { scope }))[0]?.memory.id).toBe(added.memory.id);
  });
});

describe('what a merge keeps of the memory and takes from the new content', () => {
  it('never moves the timestamps back when the new content is dated before the memory', async () => {
    const { memory, at } = rig(vectors);
    at(10);
    const first = await memory.add('I live in Porto', { scope });
    const merged = await memory.add('I live in Porto now', { scope, at: '2024-01-01T00:00:00.000Z' });
    expect(merged.decision.strategy).toBe('merge_update');
    expect(merged.memory.updatedAt).toBe(first.memory.updatedAt);
    expect(merged.memory.lastAccessedAt).toBe(first.memory.lastAccessedAt);
    expect(merged.memory.createdAt).toBe(first.memory.createdAt);
  });

  it('a plain add (the user\'s) merged into an inferred memory makes it the user\'s and verified', async () => {
    const { memory } = rig(vectors);
    await memory.add('I live in Porto', { scope, source: 'background_ai', verified: false });
    const merged = await memory.add('I live in Porto now', { scope });
    expect(merged.decision.strategy).toBe('merge_update');
    expect(merged.memory).toMatchObject({ source: 'user', verified: true });
    // Another inference merged in leaves it as it was.
    const { memory: other } = rig(vectors);
    await other.add('I live in Porto', { scope, source: 'background_ai', verified: false });
    expect((await other.add('I live in Porto now', { scope, source: 'background_ai' })).memory).toMatchObject({ source: 'background_ai', verified: false });
  });

  it('takes a category of core and a type given with the new content; a core memory stays core', async () => {
    const { memory } = rig(vectors);
    await memory.add('I live in Porto', { scope });
    const promoted = await memory.add('I live in Porto now', { scope, category: 'core', type: 'project' });
    expect(promoted.decision.strategy).toBe('merge_update');
    expect(promoted.memory).toMatchObject({ category: 'core', type: 'project' });
    const again = await memory.add('I live in Porto now', { scope, category: 'fact' });
    expect(again.memory).toMatchObject({ category: 'core', type: 'project' });
  });
});

describe('similarity thresholds', () => {
  /** A pair at cosine 0.85 on paper, turned so that it computes just below (0.8499999999999999). */
  function pairBelowByRounding(): [number[], number[]] {
    const turn = (vector: number[], angle: number) => {
      const [x = 0, y = 0] = vector;
      return [x * Math.cos(angle) - y * Math.sin(angle), x * Math.sin(angle) + y * Math.cos(angle), ...new Array<number>(DIM - 2).fill(0)];
    };
    for (let k = 1; k <= 200; k++) {
      const a = turn([1, 0], k * 0.0137);
      const b = turn([0.85, Math.sqrt(1 - 0.85 ** 2)], k * 0.0137);
      if (cosineSimilarity(a, b) < 0.85) return [a, b];
    }
    throw new Error('no pair found');
  }

  it('counts a similarity a rounding error below 0.85 as 0.85 (a merge), and says what it decided', async () => {
    const [old, restated] = pairBelowByRounding();
    const { memory } = rig({ old, restated });
    await memory.add('old', { scope });
    const result = await memory.add('restated', { scope });
    expect(result.decision.similarity).toBeLessThan(0.85);
    expect(result.decision.strategy).toBe('merge_update');
    expect(result.decision.reason).toMatch(/^similarity 0\.850 >= 0\.85/u);
  });

  it('shows every digit where three would show a threshold the similarity is not on: in a boost and an upgrade too', async () => {
    const { memory, at } = rig({ old: axisVector(DIM, 0), near: vectorWithSimilarity(DIM, 0, 1, 0.849996) });
    await memory.add('old', { scope });
    at(100);
    const kept = await memory.add('near', { scope });
    expect(kept.boosted).toBeDefined();
    const boost = (await memory.history(kept.boosted!.id)).at(-1);
    expect(boost?.reason).toMatch(/^mentioned again at similarity 0\.849996\d* \(keep_both\)/u);
    // 0.9504 against a summary: lifted to full (> 0.95), and not shown as 0.950.
    const { memory: other, at: later } = rig({ first: axisVector(DIM, 0), again: vectorWithSimilarity(DIM, 0, 2, 0.9504) });
    const first = await other.add('first', { scope });
    later(10);
    await other.maintain();
    expect((await other.get(first.memory.id))?.level).toBe('summary');
    const upgraded = await other.add('again', { scope });
    expect(upgraded.decision.shouldUpgradeLevel).toBe(true);
    expect(upgraded.decision.reason).toMatch(/^similarity 0\.9504\d* >= 0\.85: .*level summary -> full \(similarity > 0\.95\)$/u);
  });

  it('shows every digit when three would round a similarity below a threshold onto it', async () => {
    const { memory } = rig({ old: axisVector(DIM, 0), near: vectorWithSimilarity(DIM, 0, 1, 0.849996) });
    await memory.add('old', { scope });
    const result = await memory.add('near', { scope });
    expect(result.decision.strategy).toBe('keep_both');
    expect(result.decision.reason).toMatch(/^similarity 0\.849996\d* in \[0\.6, 0\.85\)/u);
  });
});
