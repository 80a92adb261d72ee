import { describe, expect, it } from 'vitest';
import { createMemory, MemloomError, type CreateMemoryOptions, type MemoryStore, type MemoryVersion } from '../src/index.js';
import { axisVector, createFakeClock, createInMemoryStore, createRecord, createScriptedModel, createTestEmbedder, vectorWithSimilarity } from '../src/testing/index.js';

/**
 * Seed 004: a mention that wakes a compressed memory merges with the text the
 * compression hid (kept in its history), not with the compressed shadow, so
 * the facts the compression left out stay in the live memory.
 */
const DIM = 16;
const DAY = 86_400_000;
const START = '2024-01-01T10:00:00.000Z';
const scope = { userId: 'zhangsan' };

/** A memory whose store counts its history reads; `history` may stand in for the store's own. */
function rig(
  vectors: Record<string, number[]>,
  options: Partial<CreateMemoryOptions> = {},
  history?: (inner: MemoryStore, id: string) => Promise<MemoryVersion[]>,
) {
  const inner = createInMemoryStore();
  const store = Object.create(inner) as typeof inner;
  const reads = { history: 0 };
  store.history = (id: string) => {
    reads.history++;
    return history ? history(inner, id) : inner.history(id);
  };
  const clock = createFakeClock(START);
  const memory = createMemory({ store, embedder: createTestEmbedder({ dimension: DIM, vectors }), clock, ...options });
  const day = (n: number) => clock.set(Date.parse(START) + (n - 1) * DAY);
  return { memory, store: inner, clock, reads, day };
}

/** The weight a merge gives a memory written at weight 1, `days` old: the decayed weight + 60% of the gap. */
const mergedWeight = (days: number) => 1 / (1 + 0.01 * days) + (1 - 1 / (1 + 0.01 * days)) * 0.6;

const STORIES = [
  {
    language: 'English',
    said: 'My name is Zhang San and I am an AI engineer. I work in Beijing.',
    summary: 'My name is Zhang San and I am an AI engineer…',
    mention: 'I am Zhang San, an AI engineer at a startup',
    merged: 'I am Zhang San, an AI engineer at a startup. I work in Beijing.',
    hidden: 'Beijing',
  },
  {
    language: 'Chinese',
    said: '我叫张三，是一名AI工程师，目前在北京工作',
    summary: '我叫张三，是一名AI工程师…',
    mention: '我是AI工程师张三',
    merged: '我是AI工程师张三。目前在北京工作',
    hidden: '北京',
  },
];

describe('a merge into a compressed memory keeps the facts the compression hid', () => {
  it.each(STORIES)('seed 004 in $language: day 10 compresses, day 15 merges at 0.96 (summary -> full)', async (story) => {
    const { memory, reads, day } = rig({ [story.said]: axisVector(DIM, 0), [story.mention]: vectorWithSimilarity(DIM, 0, 5, 0.96) });
    const { memory: added } = await memory.add(story.said, { scope });
    day(10);
    await memory.maintain();
    const compressed = await memory.get(added.id);
    expect(compressed).toMatchObject({ level: 'summary', content: story.summary });
    expect(compressed?.content).not.toContain(story.hidden);
    reads.history = 0;

    day(15);
    const result = await memory.add(story.mention, { scope });
    expect(result.decision).toMatchObject({ strategy: 'merge_update', shouldRefreshTimestamp: true, shouldUpgradeLevel: true, nearestId: added.id });
    const record = await memory.get(added.id);
    expect(record?.content).toBe(story.merged);
    expect(record?.content).toContain(story.hidden);
    // Level, timestamp and weight as seed 004 says, whatever the text.
    expect(record).toMatchObject({ level: 'full', updatedAt: new Date(Date.parse(START) + 14 * DAY).toISOString() });
    expect(record?.weight).toBeCloseTo(mergedWeight(14), 6);
    // One history read for the merge into a compressed memory.
    expect(reads.history).toBe(1);
  });

  it('reads no history for a merge into a full memory', async () => {
    const said = 'I like green tea in the morning';
    const mention = 'I like green tea every morning';
    const { memory, reads } = rig({ [said]: axisVector(DIM, 0), [mention]: vectorWithSimilarity(DIM, 0, 5, 0.96) });
    await memory.add(said, { scope });
    const result = await memory.add(mention, { scope });
    expect(result.decision.strategy).toBe('merge_update');
    expect(reads.history).toBe(0);
  });

  // `memloom import --merge` adds with trigger import: its merge writes text as any other does.
  it.each(['user_mention', 'import'] as const)('merges a memory compressed twice (full -> summary -> tag) with its full text; a later merge starts from that merged text (trigger %s)', async (trigger) => {
    const [story] = STORIES;
    const { said, mention, merged } = story!;
    const later = 'I work in Beijing, near the Summer Palace';
    const { memory, day } = rig({
      [said]: axisVector(DIM, 0),
      [mention]: vectorWithSimilarity(DIM, 0, 5, 0.92),
      [merged]: axisVector(DIM, 0),
      [later]: vectorWithSimilarity(DIM, 0, 6, 0.92),
    });
    const { memory: added } = await memory.add(said, { scope });
    day(10);
    await memory.maintain();
    day(40);
    await memory.maintain();
    expect(await memory.get(added.id)).toMatchObject({ level: 'tag', content: '#Zhang #San #AI #Beijing' });

    day(45);
    const first = await memory.add(mention, { scope, trigger });
    expect(first.decision.strategy).toBe('merge_update');
    // At 0.92 a tag rises one level, to summary; the merged text is stored whole (see mention.ts).
    expect(await memory.get(added.id)).toMatchObject({ level: 'summary', content: merged, updatedAt: new Date(Date.parse(START) + 44 * DAY).toISOString() });
    expect((await memory.get(added.id))?.weight).toBeCloseTo(mergedWeight(44), 6);

    // Compressed again (35 days after the merge: tag), then woken again: the text to merge with is the
    // first merge's (startup), written below full level, not the day-1 text before it.
    day(80);
    await memory.maintain();
    expect((await memory.get(added.id))?.level).toBe('tag');
    day(81);
    await memory.add(later, { scope });
    const record = await memory.get(added.id);
    expect(record?.content).toBe('I work in Beijing, near the Summer Palace. I am Zhang San, an AI engineer at a startup.');
    expect(record?.level).toBe('summary');
  });

  it('falls back to the compressed text when the store keeps no history: the new statement replaces it', async () => {
    const [story] = STORIES;
    const { said, mention } = story!;
    const { memory, day } = rig({ [said]: axisVector(DIM, 0), [mention]: vectorWithSimilarity(DIM, 0, 5, 0.96) }, {}, async () => []);
    const { memory: added } = await memory.add(said, { scope });
    day(10);
    await memory.maintain();
    day(15);
    const result = await memory.add(mention, { scope });
    expect(result.decision.strategy).toBe('merge_update');
    expect(await memory.get(added.id)).toMatchObject({ level: 'full', content: mention });
    expect((await memory.get(added.id))?.weight).toBeCloseTo(mergedWeight(14), 6);
  });

  it('lets a NOT_FOUND thrown by a store\'s history reach the caller: the contract gives an empty history for a missing memory', async () => {
    const [story] = STORIES;
    const { said, mention } = story!;
    const notFound = new MemloomError({ code: 'NOT_FOUND', backend: 'wrapped', message: 'no history for this id' });
    const { memory, store, day } = rig({ [said]: axisVector(DIM, 0), [mention]: vectorWithSimilarity(DIM, 0, 5, 0.96) }, {}, async () => {
      throw notFound;
    });
    const { memory: added } = await memory.add(said, { scope });
    day(10);
    await memory.maintain();
    day(15);
    // Before 67791e7 the merge swallowed it and took the compressed text instead.
    await expect(memory.add(mention, { scope })).rejects.toBe(notFound);
    expect(await store.get(added.id)).toMatchObject({ level: 'summary', revision: 2 });
  });

  it('falls back to the compressed text of an imported memory, whose history holds only the import', async () => {
    // Taken as a whole text, its tags about other things would be kept after the new statement.
    const shadow = '#Beijing #Shanghai #travel #Zhang';
    const mention = 'I am Zhang San, an AI engineer at a startup';
    const { memory, store } = rig({ [shadow]: axisVector(DIM, 0), [mention]: vectorWithSimilarity(DIM, 0, 5, 0.92) });
    const record = { ...createRecord({ id: 'imported', content: shadow, scope, atIso: START }, { importance: 1, category: 'fact', type: 'user' }), level: 'tag' as const };
    await store.open({ dimension: DIM, embedderId: memory.embedder.id });
    const version = { memoryId: 'imported', version: 1, at: START, trigger: 'import' as const, action: 'create' as const, reason: 'copied', before: null, after: record };
    await store.apply([{ op: 'put', memory: record, vector: axisVector(DIM, 0), expectedRevision: 0, version }]);
    await memory.add(mention, { scope });
    expect(await memory.get('imported')).toMatchObject({ level: 'summary', content: mention });
  });

  it('after a restore of a compressed version, merges with the text that version stood for, not its "…" summary', async () => {
    const [, story] = STORIES;
    const { said, summary, mention, merged } = story!;
    const other = '我是AI工程师张三，在一家创业公司';
    const { memory, day } = rig({
      [said]: axisVector(DIM, 0),
      // The restore embeds the text it brings back.
      [summary]: axisVector(DIM, 0),
      [other]: vectorWithSimilarity(DIM, 0, 5, 0.96),
      [mention]: vectorWithSimilarity(DIM, 0, 6, 0.96),
    });
    const { memory: added } = await memory.add(said, { scope });
    day(10);
    await memory.maintain();
    day(12);
    await memory.add(other, { scope });
    // The merge undone: back to version 2, the day-10 summary.
    await memory.restore(added.id, 2);
    expect(await memory.get(added.id)).toMatchObject({ level: 'summary', content: summary });
    day(15);
    const result = await memory.add(mention, { scope });
    expect(result.decision.strategy).toBe('merge_update');
    expect(await memory.get(added.id)).toMatchObject({ level: 'full', content: merged });
    expect((await memory.history(added.id)).map((version) => version.action)).toEqual(['create', 'compress', 'merge', 'restore', 'merge']);
  });

  it("gives the model the full text the compression hid as the old memory, and stores the model's merge", async () => {
    const [, story] = STORIES;
    const { said, mention, summary } = story!;
    const answer = '我是AI工程师张三，目前在北京工作';
    const model = createScriptedModel((request) => (request.prompt.includes('New information:') ? answer : summary));
    const { memory, day } = rig({ [said]: axisVector(DIM, 0), [mention]: vectorWithSimilarity(DIM, 0, 5, 0.96) }, { languageModel: model });
    const { memory: added } = await memory.add(said, { scope });
    day(10);
    await memory.maintain();
    expect((await memory.get(added.id))?.content).toBe(summary);
    day(15);
    const result = await memory.add(mention, { scope });
    const merges = model.requests.filter((request) => request.prompt.includes('New information:'));
    expect(merges).toHaveLength(1);
    expect(merges[0]?.prompt).toContain(`Existing memory:\n${said}\n`);
    expect(result.modelFallback).toBeUndefined();
    expect(await memory.get(added.id)).toMatchObject({ level: 'full', content: answer });
  });

  it('decides again when the memory changes while its history is read (CONFLICT), merging with the changed text', async () => {
    const [story] = STORIES;
    const { said, mention } = story!;
    const edited = 'My name is Zhang San and I am an AI engineer. I work in Shanghai.';
    let edit: (() => Promise<unknown>) | undefined;
    const { memory, reads, day } = rig({ [said]: axisVector(DIM, 0), [edited]: axisVector(DIM, 0), [mention]: vectorWithSimilarity(DIM, 0, 5, 0.96) }, {}, async (inner, id) => {
      const history = await inner.history(id);
      // Another writer, between the read of the history and the merge's write.
      const change = edit;
      edit = undefined;
      await change?.();
      return history;
    });
    const { memory: added } = await memory.add(said, { scope });
    day(10);
    await memory.maintain();
    day(15);
    edit = () => memory.update(added.id, { content: edited });
    await memory.add(mention, { scope });
    expect(reads.history).toBe(2);
    const record = await memory.get(added.id);
    expect(record?.content).toBe('I am Zhang San, an AI engineer at a startup. I work in Shanghai.');
    expect((await memory.history(added.id)).map((version) => version.action)).toEqual(['create', 'compress', 'edit', 'merge']);
  });

  it('stores the mention as a new memory when another writer deletes the nearest memory after the search (CONFLICT, decided again)', async () => {
    const [story] = STORIES;
    const { said, mention } = story!;
    let deleteFirst: string | undefined;
    // The store found the memory; another writer deletes it before its history is read: the history is empty.
    const { memory, store, reads, day } = rig({ [said]: axisVector(DIM, 0), [mention]: vectorWithSimilarity(DIM, 0, 5, 0.96) }, {}, async (inner, id) => {
      if (id === deleteFirst) await inner.apply([{ op: 'delete', id }]);
      return inner.history(id);
    });
    const { memory: added } = await memory.add(said, { scope });
    day(10);
    await memory.maintain();
    expect((await memory.get(added.id))?.level).toBe('summary');
    day(15);
    deleteFirst = added.id;
    const result = await memory.add(mention, { scope });
    // The merge into the deleted memory was not written; the add decided again, with no memory near.
    expect(result.decision.strategy).toBe('create_new');
    expect(result.memory).toMatchObject({ content: mention, level: 'full' });
    expect(result.memory.id).not.toBe(added.id);
    expect(await memory.get(added.id)).toBeUndefined();
    expect(await store.history(added.id)).toEqual([]);
    expect((await memory.list({ scope })).map((record) => record.id)).toEqual([result.memory.id]);
    expect(reads.history).toBe(1);
  });

  it('writes nothing and asks no model when the add is aborted while the history is read', async () => {
    const [story] = STORIES;
    const { said, mention } = story!;
    const controller = new AbortController();
    const model = createScriptedModel((request) => (request.prompt.includes('New information:') ? 'merged' : story!.summary));
    const { memory, day } = rig({ [said]: axisVector(DIM, 0), [mention]: vectorWithSimilarity(DIM, 0, 5, 0.96) }, { languageModel: model }, async (inner, id) => {
      controller.abort(new Error('stop'));
      return inner.history(id);
    });
    const { memory: added } = await memory.add(said, { scope });
    day(10);
    await memory.maintain();
    const before = await memory.get(added.id);
    const calls = model.requests.length;
    day(15);
    await expect(memory.add(mention, { scope, signal: controller.signal })).rejects.toThrow('stop');
    expect(model.requests.length).toBe(calls);
    expect(await memory.get(added.id)).toEqual(before);
  });
});

describe('maintenance compresses from the text a memory was last written with', () => {
  it.each(['user_mention', 'import'] as const)('from the text a merge with trigger %s wrote below full level', async (trigger) => {
    const said = 'I am an AI engineer. I work in Beijing.';
    const mention = 'I am an AI engineer at a startup called Acme';
    const merged = 'I am an AI engineer at a startup called Acme. I work in Beijing.';
    // A model that merges into `merged` and compresses anything to "#engineer".
    const model = createScriptedModel((request) => (request.prompt.includes('New information:') ? merged : '#engineer'));
    const { memory, day } = rig({ [said]: axisVector(DIM, 0), [mention]: vectorWithSimilarity(DIM, 0, 5, 0.9) }, { languageModel: model });
    const { memory: added } = await memory.add(said, { scope });
    day(10);
    await memory.maintain();
    day(12);
    await memory.add(mention, { scope, trigger });
    expect(await memory.get(added.id)).toMatchObject({ level: 'summary', content: merged });
    const asked = model.requests.length;
    day(60);
    await memory.maintain();
    expect((await memory.get(added.id))?.level).toBe('tag');
    const compressions = model.requests.slice(asked);
    expect(compressions).toHaveLength(1);
    expect(compressions[0]?.prompt).toContain(merged);
  });


  it('not from the compressed text a boost kept (a mention kept beside it)', async () => {
    const said = '我叫张三，是一名AI工程师，目前在北京工作';
    const related = '我现在是产品经理了';
    const { memory, day } = rig({ [said]: axisVector(DIM, 0), [related]: vectorWithSimilarity(DIM, 0, 5, 0.7) });
    const { memory: added } = await memory.add(said, { scope });
    day(10);
    await memory.maintain();
    day(11);
    const result = await memory.add(related, { scope });
    expect(result.decision.strategy).toBe('keep_both');
    expect(result.boosted?.content).toBe('我叫张三，是一名AI工程师…');
    day(40);
    await memory.maintain();
    // From the day-1 text; the summary it had when boosted would give "#张三 #AI #工程师".
    expect(await memory.get(added.id)).toMatchObject({ level: 'tag', content: '#张三 #工程师 #北京 #工作' });
  });
});
