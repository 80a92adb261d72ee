import { describe, expect, it } from 'vitest';
import { createMemory, keywordText, MemloomError, reindex, type CreateMemoryOptions } from '../src/index.js';
import { axisVector, createFakeClock, createInMemoryStore, createTestEmbedder, vectorWithSimilarity } from '../src/testing/index.js';

const DIM = 16;
const DAY = 86_400_000;
const scope = { userId: 'a' };

function rig(options: Partial<CreateMemoryOptions> = {}) {
  const embedder = createTestEmbedder({
    dimension: DIM,
    vectors: {
      'Bought a kayak': axisVector(DIM, 0),
      'Bought a red kayak': axisVector(DIM, 0),
      'We talked about weekend plans': axisVector(DIM, 1),
      'Any plans for the lake?': axisVector(DIM, 2),
      'Sold the kayak': axisVector(DIM, 3),
      // An answer to the lake question, a little like it (cosine 0.3).
      'Rented a canoe': vectorWithSimilarity(DIM, 2, 5, 0.3),
    },
  });
  const clock = createFakeClock('2024-03-01T09:00:00.000Z');
  const store = createInMemoryStore();
  const memory = createMemory({ store, embedder, clock, ...options });
  return { memory, embedder, clock, store };
}

/** normalize(a + w·b) for orthogonal unit a and b: the two non-zero components. */
const blended = (weight: number) => [1 / Math.sqrt(1 + weight ** 2), weight / Math.sqrt(1 + weight ** 2)];

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (MemloomError.isInstance(error)) return error.code;
    throw error;
  }
  throw new Error('expected a MemloomError');
}

describe('context kept on the memory', () => {
  it('indexes the context for keyword search after the content', async () => {
    expect(keywordText({ content: 'Bought a kayak' })).toBe('Bought a kayak');
    expect(keywordText({ content: 'Bought a kayak', context: 'Any plans for the lake?' })).toBe('Bought a kayak\nBought a kayak\nAny plans for the lake?');
    const { memory } = rig({ retrieval: { contextWeight: 0 } });
    const added = await memory.add('Bought a kayak', { scope, context: 'Any plans for the lake?' });
    await memory.add('Sold the kayak', { scope });
    // "lake" is only in the context; the vectors do not help (weight 0, orthogonal axes).
    const [hit] = await memory.search('lake', { scope });
    expect(hit?.memory.id).toBe(added.memory.id);
    expect(hit?.parts.text).toBeGreaterThan(0);
  });

  it('treats a blank context as none and refuses one longer than limits.maxContentLength', async () => {
    const { memory } = rig({ limits: { maxContentLength: 40 } });
    const added = await memory.add('Bought a kayak', { scope, context: '   ' });
    expect(added.memory).not.toHaveProperty('context');
    expect(await codeOf(memory.add('Sold the kayak', { scope, context: 'x'.repeat(41) }))).toBe('CONTENT_TOO_LONG');
  });

  it('keeps the newest context given on a merge, and the memory its own when a merge brings none', async () => {
    const { memory, store } = rig({ retrieval: { contextWeight: 0.1 } });
    const first = await memory.add('Bought a kayak', { scope, context: 'We talked about weekend plans' });
    // Without a context: cosine 0.995 with the stored vector, a merge that keeps the old context and its pull.
    const plain = await memory.add('Bought a kayak', { scope });
    expect(plain.decision.strategy).toBe('merge_update');
    expect(plain.memory.id).toBe(first.memory.id);
    expect(plain.memory.context).toBe('We talked about weekend plans');
    const [x, y] = blended(0.1);
    expect(((await store.getVector(first.memory.id)) as number[]).slice(0, 2).map((value) => value.toFixed(6))).toEqual([x, y].map((value) => value!.toFixed(6)));
    // With a new context: the newest wins, and the vector moves toward it.
    const next = await memory.add('Bought a kayak', { scope, context: 'Any plans for the lake?' });
    expect(next.decision.strategy).toBe('merge_update');
    expect(next.memory.context).toBe('Any plans for the lake?');
    const vector = (await store.getVector(first.memory.id)) as number[];
    expect(vector[1]).toBeCloseTo(0, 9);
    expect(vector[2]).toBeCloseTo(y!, 6);
  });

  it('merges the same words said again in the same context (similarity 1), not only when said without one', async () => {
    const { memory } = rig();
    const first = await memory.add('Bought a kayak', { scope, context: 'Any plans for the lake?' });
    // The content's own vector scores 1/sqrt(1.49) = 0.82 against the stored one (kept both);
    // moved toward the same context, as it would be stored, it is the stored vector.
    const again = await memory.add('Bought a kayak', { scope, context: 'Any plans for the lake?' });
    expect(again.decision.strategy).toBe('merge_update');
    expect(again.decision.similarity).toBeCloseTo(1, 9);
    expect(again.memory.id).toBe(first.memory.id);
    expect(await memory.count({ scope })).toBe(1);
  });

  it('keeps the same words after another question apart', async () => {
    const { memory } = rig();
    const first = await memory.add('Bought a kayak', { scope, context: 'Any plans for the lake?' });
    // Another context: by its own vector 0.82, moved toward its context 1/1.49 = 0.67; the nearer counts.
    const other = await memory.add('Bought a kayak', { scope, context: 'We talked about weekend plans' });
    expect(other.decision.strategy).toBe('keep_both');
    expect(other.decision.similarity).toBeCloseTo(1 / Math.sqrt(1.49), 9);
    expect(other.memory.id).not.toBe(first.memory.id);
    expect(await memory.count({ scope })).toBe(2);
  });

  it('merges the same words said without a context into a memory kept with one (similarity 1), which keeps its context', async () => {
    const { memory, store, embedder } = rig();
    const first = await memory.add('Bought a kayak', { scope, context: 'Any plans for the lake?' });
    const embedded = embedder.calls.length;
    // The same words: moved toward the stored memory's context, they are its stored vector.
    const bare = await memory.add('Bought a kayak', { scope });
    // That context is embedded once, to look with and to store with.
    expect(embedder.calls.slice(embedded).flat().filter((text) => text === 'Any plans for the lake?')).toHaveLength(1);
    expect(bare.decision.strategy).toBe('merge_update');
    expect(bare.decision.similarity).toBeCloseTo(1, 9);
    expect(bare.memory.id).toBe(first.memory.id);
    expect(bare.memory.context).toBe('Any plans for the lake?');
    const [x, y] = blended(0.7);
    const vector = (await store.getVector(first.memory.id)) as number[];
    expect(vector[0]).toBeCloseTo(x!, 6);
    expect(vector[2]).toBeCloseTo(y!, 6);
    // Other words (the same vector here): only the content's own vector counts, 0.82 against the stored one (kept both).
    const similar = await memory.add('Bought a red kayak', { scope });
    expect(similar.decision.strategy).toBe('keep_both');
    expect(similar.decision.similarity).toBeCloseTo(1 / Math.sqrt(1.49), 9);
    expect(await memory.count({ scope })).toBe(2);
  });

  it('scores two facts taken from one message, which share it as their context, by their own vectors', async () => {
    const { memory } = rig();
    const message = 'We talked about weekend plans';
    await memory.add('Sold the kayak', { scope, context: message });
    // Both moved toward the same context they would score (0 + 0.49)/1.49 = 0.33 against each other;
    // their words differ, so only the new fact's own vector counts: 0, a new memory.
    const second = await memory.add('Rented a canoe', { scope, context: message });
    expect(second.decision.strategy).toBe('create_new');
    expect(second.decision.similarity).toBeCloseTo(0, 9);
  });

  it('scores a reply by its own vector against the question it answers, stored as a memory of its own', async () => {
    const { memory } = rig();
    await memory.add('Any plans for the lake?', { scope });
    // Moved toward its context, the reply would score (0.3 + 0.7)/|e + 0.7·q| = 0.72 against the question (kept both);
    // the question was stored without that context, so only the reply's own vector counts: 0.3, a new memory.
    const reply = await memory.add('Rented a canoe', { scope, context: 'Any plans for the lake?' });
    expect(reply.decision.strategy).toBe('create_new');
    expect(reply.decision.similarity).toBeCloseTo(0.3, 9);
  });

  it('re-embeds with the context on an edit of the content, and sets or removes the context by update', async () => {
    const { memory, store } = rig();
    const added = await memory.add('Bought a kayak', { scope, context: 'We talked about weekend plans' });
    const [x, y] = blended(0.7);
    const edited = await memory.update(added.memory.id, { content: 'Sold the kayak' });
    expect(edited.context).toBe('We talked about weekend plans');
    let vector = (await store.getVector(added.memory.id)) as number[];
    expect(vector[3]).toBeCloseTo(x!, 6);
    expect(vector[1]).toBeCloseTo(y!, 6);

    const moved = await memory.update(added.memory.id, { context: 'Any plans for the lake?' });
    expect(moved.context).toBe('Any plans for the lake?');
    vector = (await store.getVector(added.memory.id)) as number[];
    expect(vector[1]).toBeCloseTo(0, 9);
    expect(vector[2]).toBeCloseTo(y!, 6);

    const removed = await memory.update(added.memory.id, { context: null });
    expect(removed).not.toHaveProperty('context');
    expect(await store.getVector(added.memory.id)).toEqual(axisVector(DIM, 3));
    expect((await memory.search('lake', { scope })).map((hit) => hit.parts.text)).toEqual([0]);

    // restore brings the version's context back, and its pull.
    const restored = await memory.restore(added.memory.id, 1);
    expect(restored.content).toBe('Bought a kayak');
    expect(restored.context).toBe('We talked about weekend plans');
    vector = (await store.getVector(added.memory.id)) as number[];
    expect(vector[0]).toBeCloseTo(x!, 6);
    expect(vector[1]).toBeCloseTo(y!, 6);
    expect(await codeOf(memory.update(added.memory.id, { context: 42 } as never))).toBe('INVALID_INPUT');
  });

  it('drops the context when maintenance compresses the memory', async () => {
    const { memory, clock } = rig();
    const added = await memory.add('Bought a kayak', { scope, context: 'Any plans for the lake?' });
    clock.advance(40 * DAY);
    const report = await memory.maintain();
    expect(report.compressed).toBe(1);
    const compressed = await memory.get(added.memory.id);
    expect(compressed?.level).not.toBe('full');
    expect(compressed).not.toHaveProperty('context');
    // The history keeps it.
    expect((await memory.history(added.memory.id))[0]?.after.context).toBe('Any plans for the lake?');
  });

  it('re-index embeds each memory with its context, at the weight given', async () => {
    const { memory, store } = rig();
    const added = await memory.add('Bought a kayak', { scope, context: 'Any plans for the lake?' });
    const plain = await memory.add('Sold the kayak', { scope });
    const next = createTestEmbedder({
      id: 'memloom/next-embedder',
      dimension: 8,
      vectors: { 'Bought a kayak': axisVector(8, 4), 'Any plans for the lake?': axisVector(8, 5), 'Sold the kayak': axisVector(8, 6) },
    });
    await reindex({ store, embedder: next, contextWeight: 0.5 });
    const [x, y] = blended(0.5);
    const vector = (await store.getVector(added.memory.id)) as number[];
    expect(vector[4]).toBeCloseTo(x!, 6);
    expect(vector[5]).toBeCloseTo(y!, 6);
    expect(await store.getVector(plain.memory.id)).toEqual(axisVector(8, 6));
    expect(await codeOf(reindex({ store, embedder: next, contextWeight: -1 }))).toBe('INVALID_OPTIONS');
  });
});

describe('addTurns: the turns of a conversation, each with the turns before it as context', () => {
  const turns = [
    { content: 'Ana: Any plans for the lake?', at: '2024-02-01T10:00:00.000Z', sources: ['d1'] },
    { content: 'Ben: We talked about weekend plans', at: '2024-02-01T10:01:00.000Z', sources: ['d2'] },
    { content: 'Ana: Bought a kayak', at: '2024-02-01T10:02:00.000Z', sources: ['d3'], tags: ['boats'] },
  ];

  it('stores each turn in order with its own time and sources, and the two turns before it as its context', async () => {
    const { memory } = rig();
    const results = await memory.addTurns(turns, { scope, tags: ['chat'] });
    expect(results.map((result) => [result.decision.strategy, result.memory.content])).toEqual([
      ['create_new', 'Ana: Any plans for the lake?'],
      ['create_new', 'Ben: We talked about weekend plans'],
      ['create_new', 'Ana: Bought a kayak'],
    ]);
    const stored = await memory.list({ scope, orderBy: 'stored' });
    expect(stored.map((record) => [record.sources, record.createdAt, record.tags, record.context])).toEqual([
      [['d1'], '2024-02-01T10:00:00.000Z', ['chat'], undefined],
      [['d2'], '2024-02-01T10:01:00.000Z', ['chat'], 'Ana: Any plans for the lake?'],
      [['d3'], '2024-02-01T10:02:00.000Z', ['boats'], 'Ana: Any plans for the lake?\nBen: We talked about weekend plans'],
    ]);
  });

  it('finds an answer by the words of the question before it, which a turn added alone is not', async () => {
    const alone = rig({ retrieval: { contextWeight: 0 } });
    for (const turn of turns) await alone.memory.add(turn.content, { scope });
    const byWords = async (target: typeof memory) => (await target.search('lake', { scope })).filter((hit) => hit.parts.text > 0).map((hit) => hit.memory.content);
    expect(await byWords(alone.memory)).toEqual(['Ana: Any plans for the lake?']);

    const { memory } = rig({ retrieval: { contextWeight: 0 } });
    await memory.addTurns(turns.map((turn) => turn.content), { scope });
    expect(await byWords(memory)).toEqual(['Ana: Any plans for the lake?', 'Ben: We talked about weekend plans', 'Ana: Bought a kayak']);
  });

  it('merges every turn of the same conversation added twice into its own memory', async () => {
    const { memory } = rig();
    const first = await memory.addTurns(turns, { scope });
    const again = await memory.addTurns(turns, { scope });
    expect(again.map((result) => result.decision.strategy)).toEqual(['merge_update', 'merge_update', 'merge_update']);
    for (const [index, result] of again.entries()) {
      expect(result.decision.similarity).toBeCloseTo(1, 9);
      expect(result.memory.id).toBe(first[index]?.memory.id);
    }
    expect(await memory.count({ scope })).toBe(3);
  });

  it('takes as many turns of context as asked, cut to limits.maxContentLength from the start', async () => {
    const { memory } = rig({ limits: { maxContentLength: 40 } });
    await memory.addTurns(['first turn, long enough to be cut', 'second turn', 'third turn'], { scope: { userId: 'one' }, contextTurns: 1 });
    expect((await memory.list({ scope: { userId: 'one' }, orderBy: 'stored' })).map((record) => record.context)).toEqual([undefined, 'first turn, long enough to be cut', 'second turn']);
    await memory.addTurns(['first turn, long enough to be cut', 'second turn', 'third turn'], { scope: { userId: 'two' }, contextTurns: 5 });
    const contexts = (await memory.list({ scope: { userId: 'two' }, orderBy: 'stored' })).map((record) => record.context);
    expect(contexts[2]).toBe('first turn, long enough to be cut\nsecond turn'.slice(-40).trim());
    await memory.addTurns(['a', 'b'], { scope: { userId: 'three' }, contextTurns: 0 });
    expect((await memory.list({ scope: { userId: 'three' } })).map((record) => record.context)).toEqual([undefined, undefined]);
  });

  it('skip resumes a call: the turns before it are not stored again but give the turns after them their context', async () => {
    const { memory } = rig();
    const progress: [number, number][] = [];
    await memory.addTurns(turns.slice(0, 1), { scope, tags: ['chat'] });
    const results = await memory.addTurns(turns, { scope, tags: ['chat'], skip: 1, onProgress: (done, total) => void progress.push([done, total]) });
    expect(results.map((result) => result.memory.content)).toEqual(['Ben: We talked about weekend plans', 'Ana: Bought a kayak']);
    expect(progress).toEqual([[1, 2], [2, 2]]);
    const stored = await memory.list({ scope, orderBy: 'stored' });
    // What one uninterrupted call stores (the test above).
    expect(stored.map((record) => [record.sources, record.content, record.context])).toEqual([
      [['d1'], 'Ana: Any plans for the lake?', undefined],
      [['d2'], 'Ben: We talked about weekend plans', 'Ana: Any plans for the lake?'],
      [['d3'], 'Ana: Bought a kayak', 'Ana: Any plans for the lake?\nBen: We talked about weekend plans'],
    ]);
    expect(await memory.addTurns(turns, { scope, skip: 3 })).toEqual([]);
    // More than the turns given: a checkpoint of other turns, not a call with nothing to do.
    await expect(memory.addTurns(turns, { scope, skip: 4 })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('skip is 4, more than the 3 turns given') });
  });

  it('embeds the turns 32 at a time, content and context in one call, and stores what one add per turn stores', async () => {
    const lines = Array.from({ length: 40 }, (_, index) => `turn number ${index} about topic ${index % 7}`);
    const calls: number[] = [];
    const counted = (embedder: ReturnType<typeof createTestEmbedder>) => ({
      ...embedder,
      embed: (texts: string[], options?: { purpose?: 'document' | 'query' }) => {
        calls.push(texts.length);
        return embedder.embed(texts, options);
      },
    });
    const batched = createMemory({ store: createInMemoryStore(), embedder: counted(createTestEmbedder({ dimension: DIM })), clock: createFakeClock('2024-03-01T09:00:00.000Z') });
    const turns = await batched.addTurns(lines, { scope, merge: false });
    expect(calls).toEqual([32 + 31, 8 + 8]);

    const single = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder({ dimension: DIM }), clock: createFakeClock('2024-03-01T09:00:00.000Z') });
    for (const [index, line] of lines.entries()) {
      const context = lines.slice(Math.max(0, index - 2), index).join('\n');
      const added = await single.add(line, { scope, merge: false, ...(context ? { context } : {}) });
      const twin = turns[index]?.memory;
      expect(twin?.context).toBe(added.memory.context);
      expect(await batched.store.getVector(twin?.id as string)).toEqual(await single.store.getVector(added.memory.id));
    }
  });

  it('checks every turn before storing the first: a bad turn or option stores nothing', async () => {
    const { memory } = rig();
    expect(await codeOf(memory.addTurns(['fine', 'also fine', '   '], { scope }))).toBe('EMPTY_CONTENT');
    expect(await codeOf(memory.addTurns(['fine', { content: 'dated', at: 'not a date' }], { scope }))).toBe(await codeOf(memory.add('dated', { scope, at: 'not a date' })));
    expect(await codeOf(memory.addTurns(['fine', { content: 'odd', speaker: 'x' } as never], { scope }))).toBe('INVALID_INPUT');
    expect(await codeOf(memory.addTurns(['fine'], { scope, contextTurns: -1 }))).toBe('INVALID_OPTIONS');
    expect(await codeOf(memory.addTurns(['fine'], { scope, context: 'no' } as never))).toBe('INVALID_OPTIONS');
    expect(await codeOf(memory.addTurns('not a list' as never, { scope }))).toBe('INVALID_INPUT');
    expect(await memory.count({ scope })).toBe(0);
    expect(await memory.addTurns([], { scope })).toEqual([]);
  });
});
