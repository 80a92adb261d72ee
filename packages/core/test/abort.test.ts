import { describe, expect, it } from 'vitest';
import { callModel, copyMemories, createMemory, reindex, type Embedder, type LanguageModel } from '../src/index.js';
import { axisVector, createControlledModel, createFakeClock, createInMemoryPolicyStorage, createInMemoryStore, createRecord, createScriptedModel, createTestEmbedder } from '../src/testing/index.js';
import { versionOf } from '../src/records.js';
import { DAY, errorOf, pipelineRig, START } from './pipeline-rig.js';

const alice = { userId: 'alice' };

describe('callModel with the caller signal', () => {
  it("aborts the call in flight and throws the caller's reason, not a TIMEOUT or MODEL_ERROR", async () => {
    const { model, call, abortDuring } = createControlledModel();
    const stop = new AbortController();
    const reason = new Error('stopped by the user');
    const result = callModel(model, { prompt: 'Compress this', signal: stop.signal }, 60_000);
    const pending = await call(0, result);
    expect(pending.request.signal?.aborted).toBe(false);
    abortDuring(pending, stop, reason, 'a late answer');
    await expect(result).rejects.toBe(reason);
    // The model was told to stop, with the same reason.
    expect(pending.request.signal?.aborted).toBe(true);
    expect(pending.request.signal?.reason).toBe(reason);
  });

  it('a model that stops with its own error when told still gives the caller its reason', async () => {
    const stop = new AbortController();
    const reason = new Error('stopped by the user');
    const heeding: LanguageModel = {
      id: 'test/heeding',
      generate: (request) =>
        new Promise<string>((resolve, reject) => {
          request.signal?.addEventListener('abort', () => reject(new Error('the connection was closed')));
          queueMicrotask(() => {
            stop.abort(reason);
            // Not told to stop: it answers.
            resolve('a late answer');
          });
        }),
    };
    await expect(callModel(heeding, { prompt: 'Merge these', signal: stop.signal }, 60_000)).rejects.toBe(reason);
  });

  it('an already aborted signal never calls the model; without a signal nothing changes', async () => {
    const model = createScriptedModel('fine');
    const reason = new Error('already stopped');
    await expect(callModel(model, { prompt: 'x', signal: AbortSignal.abort(reason) }, 60_000)).rejects.toBe(reason);
    expect(model.requests).toHaveLength(0);
    expect(await callModel(model, { prompt: 'x' }, 60_000)).toEqual({ ok: true, text: 'fine' });
  });
});

describe('maintain({ signal })', () => {
  /** Four facts a model compresses 60 days on (to the tag level). */
  async function maintainRig(languageModel?: LanguageModel) {
    const store = createInMemoryStore();
    const clock = createFakeClock(START);
    const memory = createMemory({ store, embedder: createTestEmbedder({ dimension: 16 }), clock, ...(languageModel ? { languageModel } : {}) });
    const texts = ['Alice drinks green tea every morning', 'Alice keeps bees in the garden', 'Alice plays the cello on Sundays', 'Alice grew up by the sea'];
    const ids: string[] = [];
    for (const text of texts) ids.push((await memory.add(text, { scope: alice })).memory.id);
    clock.advance(60 * DAY);
    return { memory, store, clock, ids };
  }

  it('stops inside a page: the memories done before the abort are written whole, the rest are left for the next pass', async () => {
    const { model, call, abortDuring } = createControlledModel();
    const { memory, ids } = await maintainRig(model);
    expect((await memory.maintain({ dryRun: true })).changes.map((change) => change.toLevel)).toEqual(['tag', 'tag', 'tag', 'tag']);
    const stop = new AbortController();
    const reason = new Error('Ctrl-C');
    const progress: Array<[number, number]> = [];
    const pass = memory.maintain({ signal: stop.signal, onProgress: (done, total) => void progress.push([done, total]) });
    (await call(0, pass)).answer('#tea #morning');
    abortDuring(await call(1, pass), stop, reason, '#bees');
    await expect(pass).rejects.toBe(reason);

    // The first memory's compression was written, and counted; the one stopped in, and those after it, were not touched.
    expect(progress).toEqual([[1, 4]]);
    const [tea, bees, cello, sea] = await Promise.all(ids.map((id) => memory.get(id)));
    expect(tea).toMatchObject({ level: 'tag', content: '#tea #morning', revision: 2 });
    for (const record of [bees, cello, sea]) expect(record).toMatchObject({ level: 'full', revision: 1 });

    // The next pass finishes the rest, and does not compress the first memory again.
    const finishing = createScriptedModel('#done');
    const again = createMemory({ store: memory.store, embedder: memory.embedder, clock: memory.clock, languageModel: finishing });
    expect(await again.maintain()).toMatchObject({ scanned: 4, compressed: 3 });
    expect(finishing.requests).toHaveLength(3);
  });

  it('waits for onProgress between pages: an abort it lets through (after a turn of the event loop) stops the pass before the next page', async () => {
    const store = createInMemoryStore();
    const clock = createFakeClock(START);
    const memory = createMemory({ store, embedder: createTestEmbedder({ dimension: 16 }), clock });
    // Two pages of the pass (10,000 memories a page), written straight to the store.
    const records = Array.from({ length: 10_001 }, (_, index) => createRecord({ id: `m${index}`, content: `note ${index}`, scope: alice, atIso: START }, { importance: 1, category: 'fact', type: 'user' }));
    for (let start = 0; start < records.length; start += 2000) {
      await store.apply(records.slice(start, start + 2000).map((record) => ({ op: 'put', memory: record, vector: axisVector(16, 0), expectedRevision: 0, version: versionOf(null, record, { trigger: 'manual_edit', action: 'create', reason: 'seeded', atIso: START }) })));
    }
    // A day on: nothing to write (the pass stays cheap), but each page is still read, planned and reported.
    clock.advance(DAY);
    const stop = new AbortController();
    const reason = new Error('Ctrl-C');
    const progress: number[] = [];
    const pass = memory.maintain({
      signal: stop.signal,
      onProgress: async (done) => {
        progress.push(done);
        // What a Ctrl-C handler needs: the event loop turns, and the abort comes in a macrotask.
        setImmediate(() => stop.abort(reason));
        await new Promise((resolve) => setTimeout(resolve, 0));
      },
    });
    await expect(pass).rejects.toBe(reason);
    expect(progress).toEqual([10_000]);
  }, 30_000);

  it('an already aborted signal reads and writes nothing, and a bad signal is INVALID_OPTIONS', async () => {
    const model = createScriptedModel('#tag');
    const { memory, ids } = await maintainRig(model);
    const reason = new Error('already stopped');
    const progress: number[] = [];
    await expect(memory.maintain({ signal: AbortSignal.abort(reason), onProgress: (done) => void progress.push(done) })).rejects.toBe(reason);
    expect(progress).toEqual([]);
    expect(model.requests).toHaveLength(0);
    for (const id of ids) expect(await memory.get(id)).toMatchObject({ level: 'full', revision: 1 });
    expect((await errorOf(memory.maintain({ signal: 'stop' as unknown as AbortSignal }))).code).toBe('INVALID_OPTIONS');
  });
});

describe('addTurns({ signal })', () => {
  const rex = 'Ana adopted a puppy named Rex';
  const turns = [rex, rex, 'Ana keeps bees in the garden'];

  it("stops inside a turn's merge: the turns before stay stored, the one in flight and those after are not", async () => {
    const { model, call, abortDuring } = createControlledModel();
    const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder({ dimension: 16 }), languageModel: model });
    const stop = new AbortController();
    const reason = new Error('Ctrl-C');
    const progress: Array<[number, number]> = [];
    const adding = memory.addTurns(turns, { scope: alice, signal: stop.signal, onProgress: (done, total) => void progress.push([done, total]) });
    // The second turn restates the first: its merge asks the model, and the abort comes while it answers.
    abortDuring(await call(0, adding), stop, reason, 'Ana adopted a puppy named Rex (again)');
    await expect(adding).rejects.toBe(reason);
    expect(progress).toEqual([[1, 3]]);
    const stored = await memory.list({ scope: alice });
    expect(stored.map((record) => [record.content, record.revision])).toEqual([[rex, 1]]);
  });

  it('stops between turns when aborted from onProgress; an already aborted signal embeds and stores nothing', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const memory = createMemory({ store: createInMemoryStore(), embedder });
    const stop = new AbortController();
    const reason = new Error('enough');
    const adding = memory.addTurns(['Ana likes jazz', 'Ana keeps bees', 'Ana grew up by the sea'], {
      scope: alice,
      signal: stop.signal,
      onProgress: (done) => {
        if (done === 1) stop.abort(reason);
      },
    });
    await expect(adding).rejects.toBe(reason);
    expect((await memory.list({ scope: alice })).map((record) => record.content)).toEqual(['Ana likes jazz']);

    const calls = embedder.calls.length;
    const other = { userId: 'bob' };
    await expect(memory.addTurns(['Bob likes tea'], { scope: other, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await expect(memory.add('Bob likes tea', { scope: other, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(embedder.calls.length).toBe(calls);
    expect(await memory.count({ scope: other })).toBe(0);
    // The turns are still checked first, and a signal must be one.
    expect((await errorOf(memory.addTurns([''], { scope: other, signal: AbortSignal.abort(reason) }))).code).toBe('EMPTY_CONTENT');
    expect((await errorOf(memory.add('Bob likes tea', { scope: other, signal: {} as AbortSignal }))).code).toBe('INVALID_OPTIONS');
  });
});

describe('a merge whose model answers as the abort comes', () => {
  it('writes nothing, whether or not the merged text needs embedding', async () => {
    for (const answer of ['Ana adopted a puppy named Rex', 'Ana adopted a puppy named Rex last spring']) {
      const stop = new AbortController();
      const reason = new Error('Ctrl-C');
      // The model answers, and the caller aborts in the same turn of the event loop.
      const model: LanguageModel = { id: 'test/answers-then-abort', generate: async () => (queueMicrotask(() => stop.abort(reason)), answer) };
      const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder({ dimension: 16 }), languageModel: model });
      await memory.add('Ana adopted a puppy named Rex', { scope: alice });
      await expect(memory.add('Ana adopted a puppy named Rex', { scope: alice, signal: stop.signal }), answer).rejects.toBe(reason);
      expect((await memory.list({ scope: alice }))[0]?.revision, answer).toBe(1);
    }
  });
});

describe('reindex and copyMemories with a signal', () => {
  it('an already aborted signal begins nothing (a re-index in progress keeps its staged vectors); a signal that is not one is INVALID_OPTIONS', async () => {
    const store = createInMemoryStore();
    await createMemory({ store, embedder: createTestEmbedder({ dimension: 16 }) }).add('Ana likes jazz', { scope: alice });
    let begun = 0;
    const beginReindex = store.beginReindex!.bind(store);
    store.beginReindex = async (target) => (begun++, beginReindex(target));
    const reason = new Error('stopped');
    const other = createTestEmbedder({ dimension: 8, id: 'other' });
    await expect(reindex({ store, embedder: other, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(begun).toBe(0);
    expect((await errorOf(reindex({ store, embedder: other, signal: 'nope' as never }))).code).toBe('INVALID_OPTIONS');
    const target = createInMemoryStore();
    await expect(copyMemories({ from: store, to: target, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect((await errorOf(copyMemories({ from: store, to: target, signal: 'nope' as never }))).code).toBe('INVALID_OPTIONS');
    expect(await target.count({})).toBe(0);
  });
});

describe('the signal goes to the embedder', () => {
  it("addTurns passes it on; an embedder that stops with its own error gives the caller's reason, not EMBEDDER_ERROR", async () => {
    const inner = createTestEmbedder({ dimension: 16 });
    const seen: Array<AbortSignal | undefined> = [];
    let onEmbed: (() => void) | undefined;
    const embedder: Embedder = {
      id: inner.id,
      dimension: inner.dimension,
      embed: (texts, options) => {
        seen.push(options?.signal);
        if (!onEmbed) return inner.embed(texts, options);
        onEmbed();
        // A model that heeds its signal: it stops with an error of its own.
        return options?.signal?.aborted ? Promise.reject(new Error('embedding cancelled')) : inner.embed(texts, options);
      },
    };
    const store = createInMemoryStore();
    const memory = createMemory({ store, embedder });
    const signal = new AbortController().signal;
    await memory.addTurns(['Ana likes jazz'], { scope: alice, signal });
    expect(seen).toEqual([signal]);

    const stop = new AbortController();
    const reason = new Error('Ctrl-C');
    onEmbed = () => stop.abort(reason);
    await expect(memory.addTurns(['Ana keeps bees'], { scope: alice, signal: stop.signal })).rejects.toBe(reason);
    expect(await memory.count({ scope: alice })).toBe(1);
  });

  it('reindex passes it on too', async () => {
    const store = createInMemoryStore();
    await createMemory({ store, embedder: createTestEmbedder({ dimension: 16 }) }).add('Ana likes jazz', { scope: alice });
    const target = createTestEmbedder({ dimension: 8, id: 'other' });
    const seen: Array<AbortSignal | undefined> = [];
    const signal = new AbortController().signal;
    const recording: Embedder = { id: target.id, dimension: target.dimension, embed: (texts, options) => (seen.push(options?.signal), target.embed(texts, options)) };
    await reindex({ store, embedder: recording, signal });
    expect(seen).toEqual([signal]);
  });
});

describe('the pipeline with a signal', () => {
  it('afterTurn: an abort during the extraction model call is thrown (not a step error), and nothing is written', async () => {
    const { model, call, abortDuring } = createControlledModel();
    const { pipeline, memory, warnings } = pipelineRig({ languageModel: model });
    const stop = new AbortController();
    const reason = new Error('Ctrl-C');
    const turn = pipeline.afterTurn({ scope: alice, user: 'I moved to Lisbon last month', assistant: 'How do you like it?', signal: stop.signal });
    abortDuring(await call(0, turn), stop, reason, '[ADD USER] The user moved to Lisbon');
    await expect(turn).rejects.toBe(reason);
    // Neither the model's operations nor the deterministic fallback's facts were added.
    expect(await memory.count({ scope: alice })).toBe(0);
    expect(warnings).toEqual([]);
  });

  it('summarizeSession: an abort during the model call writes no episode', async () => {
    const { model, call, abortDuring } = createControlledModel();
    const { pipeline, memory } = pipelineRig({ languageModel: model, policy: { session_summary_message_threshold: 4, session_summary_keep_count: 2 } });
    const messages = Array.from({ length: 6 }, (_, index) => ({ role: index % 2 === 0 ? ('user' as const) : ('assistant' as const), content: `message ${index} about the trip to Porto` }));
    const stop = new AbortController();
    const reason = new Error('Ctrl-C');
    const summary = pipeline.summarizeSession(messages, { scope: alice, signal: stop.signal });
    abortDuring(await call(0, summary), stop, reason, 'Talked about the trip to Porto.');
    await expect(summary).rejects.toBe(reason);
    expect(await memory.count({ scope: alice })).toBe(0);
  });

  it('compressLongTerm: an abort during the model call writes nothing, and does not count as the day’s compression', async () => {
    const { model, call, abortDuring } = createControlledModel();
    const { pipeline, memory } = pipelineRig({ languageModel: model, policy: { long_term_compress_char_threshold: 10 }, policyStorage: createInMemoryPolicyStorage() });
    const tea = (await memory.add('The user likes tea', { scope: alice })).memory;
    const green = (await memory.add('The user likes green tea in the morning', { scope: alice })).memory;
    const stop = new AbortController();
    const reason = new Error('Ctrl-C');
    const compressing = pipeline.compressLongTerm({ scope: alice, signal: stop.signal });
    abortDuring(await call(0, compressing), stop, reason, JSON.stringify({ groups: [{ keep: green.id, absorb: [tea.id], content: 'The user likes tea, green in the morning' }] }));
    await expect(compressing).rejects.toBe(reason);
    expect((await memory.list({ scope: alice })).map((record) => record.revision)).toEqual([1, 1]);
    // Not recorded as done: the next call compresses.
    const next = pipeline.compressLongTerm({ scope: alice });
    (await call(1, next)).answer('{"groups": []}');
    expect(await next).toMatchObject({ action: 'compressed' });
  });

  it('evolve: an abort during the model call writes no overrides', async () => {
    const { model, call, abortDuring } = createControlledModel();
    const storage = createInMemoryPolicyStorage();
    const { pipeline } = pipelineRig({ languageModel: model, policyStorage: storage, policy: { evolution_enabled: true } });
    const stop = new AbortController();
    const reason = new Error('Ctrl-C');
    const evolving = pipeline.evolve({ messages: [{ role: 'user', content: 'Please remember more of what I say' }], signal: stop.signal });
    abortDuring(await call(0, evolving), stop, reason, '{"retrieve_limit": 15}');
    await expect(evolving).rejects.toBe(reason);
    expect(storage.overrides).toBeUndefined();
    expect(storage.snapshots).toEqual([]);
  });

  it('evolve: an abort that comes as the model answers (the answer wins the race) still writes no overrides', async () => {
    const stop = new AbortController();
    const reason = new Error('Ctrl-C');
    const model: LanguageModel = {
      id: 'test/answers-as-aborted',
      generate: async () => {
        stop.abort(reason);
        return '{"retrieve_limit": 15}';
      },
    };
    const storage = createInMemoryPolicyStorage();
    const { pipeline } = pipelineRig({ languageModel: model, policyStorage: storage });
    await expect(pipeline.evolve({ messages: [{ role: 'user', content: 'Please remember more of what I say' }], signal: stop.signal })).rejects.toBe(reason);
    expect(storage.overrides).toBeUndefined();
    expect(storage.snapshots).toEqual([]);
  });

  it('review: an abort during the model call decides nothing; a bad signal is INVALID_OPTIONS', async () => {
    const { model, call, abortDuring } = createControlledModel();
    const { pipeline, memory } = pipelineRig({ languageModel: model });
    const birthday = (await memory.add("The user's birthday is 12 May", { scope: alice, importance: 2.5 })).memory;
    const stop = new AbortController();
    const reason = new Error('Ctrl-C');
    const reviewing = pipeline.review({ scope: alice, signal: stop.signal });
    abortDuring(await call(0, reviewing), stop, reason, 'A lasting fact. [PROMOTE]');
    await expect(reviewing).rejects.toBe(reason);
    expect(await memory.get(birthday.id)).toMatchObject({ category: 'fact', revision: 1 });
    expect((await errorOf(pipeline.extract({ user: 'hi', signal: 5 as unknown as AbortSignal }))).code).toBe('INVALID_OPTIONS');
  });
});

describe('search, update and restore with a signal', () => {
  /** A memory at revision 2 (its version 1 says something else), an embedder that records the signals it is given and can abort mid-call, and a store whose vector search can abort mid-read. */
  async function rig() {
    const inner = createTestEmbedder({ dimension: 16 });
    const seen: Array<AbortSignal | undefined> = [];
    let duringEmbed: (() => void) | undefined;
    const embedder: Embedder = {
      id: inner.id,
      dimension: inner.dimension,
      embed: (texts, options) => {
        seen.push(options?.signal);
        duringEmbed?.();
        // An embedder that heeds its signal stops with an error of its own.
        return options?.signal?.aborted ? Promise.reject(new Error('embedding cancelled')) : inner.embed(texts, options);
      },
    };
    const store = createInMemoryStore();
    let duringSearch: (() => void) | undefined;
    const vectorSearch = store.vectorSearch.bind(store);
    store.vectorSearch = async (query) => (duringSearch?.(), vectorSearch(query));
    const clock = createFakeClock(START);
    const memory = createMemory({ store, embedder, clock });
    const added = await memory.add('Ana likes jazz', { scope: alice });
    await memory.update(added.memory.id, { content: 'Ana loves jazz and blues' });
    clock.advance(DAY);
    seen.length = 0;
    const stored = async () => ({ record: await store.get(added.memory.id), versions: (await store.history(added.memory.id)).length });
    const before = await stored();
    return {
      memory,
      id: added.memory.id,
      seen,
      stored,
      before,
      abortWhileEmbedding: (stop: AbortController, reason: Error) => void (duringEmbed = () => stop.abort(reason)),
      abortWhileSearching: (stop: AbortController, reason: Error) => void (duringSearch = () => stop.abort(reason)),
      calm: () => void ((duringEmbed = undefined), (duringSearch = undefined)),
    };
  }

  it('an already aborted signal embeds, reads and writes nothing; a signal that is not one is INVALID_OPTIONS', async () => {
    const { memory, id, seen, stored, before } = await rig();
    const reason = new Error('already stopped');
    const aborted = AbortSignal.abort(reason);
    await expect(memory.search('jazz', { scope: alice, signal: aborted })).rejects.toBe(reason);
    await expect(memory.renderContext('jazz', { scope: alice, signal: aborted })).rejects.toBe(reason);
    await expect(memory.renderContext(undefined, { scope: alice, signal: aborted })).rejects.toBe(reason);
    await expect(memory.update(id, { content: 'Ana plays jazz piano' }, { signal: aborted })).rejects.toBe(reason);
    await expect(memory.restore(id, 1, { signal: aborted })).rejects.toBe(reason);
    expect(seen).toEqual([]);
    expect(await stored()).toEqual(before);
    // Their input is still checked first.
    expect((await errorOf(memory.search('  ', { signal: aborted }))).code).toBe('EMPTY_CONTENT');
    expect((await errorOf(memory.update('', { content: 'Ana plays jazz piano' }, { signal: aborted }))).code).toBe('INVALID_INPUT');
    expect((await errorOf(memory.restore(id, 0, { signal: aborted }))).code).toBe('INVALID_INPUT');
    for (const signal of ['stop', {}, null]) {
      expect((await errorOf(memory.search('jazz', { signal: signal as never }))).code).toBe('INVALID_OPTIONS');
      expect((await errorOf(memory.update(id, { content: 'Ana plays jazz piano' }, { signal: signal as never }))).code).toBe('INVALID_OPTIONS');
      expect((await errorOf(memory.restore(id, 1, { signal: signal as never }))).code).toBe('INVALID_OPTIONS');
    }
    expect(await stored()).toEqual(before);
  });

  it('says what is wrong with a signal that is not one in the same words in add, search, update, restore and maintain; update and restore name it among their other options', async () => {
    const { memory, id, stored, before } = await rig();
    const bad = 'stop' as never;
    const errors = {
      add: await errorOf(memory.add('Ana keeps bees', { scope: alice, signal: bad })),
      search: await errorOf(memory.search('jazz', { signal: bad })),
      update: await errorOf(memory.update(id, { content: 'Ana plays jazz piano' }, { signal: bad })),
      restore: await errorOf(memory.restore(id, 1, { signal: bad })),
    };
    for (const [call, error] of Object.entries(errors)) {
      expect(error, call).toMatchObject({ code: 'INVALID_OPTIONS', message: `[memloom] [core] invalid ${call} options: signal: must be an AbortSignal, not string` });
    }
    expect((await errorOf(memory.maintain({ signal: bad }))).message).toBe('[memloom] [core] maintain: signal must be an AbortSignal, not string');
    // One check of all of update's options: a bad reason and a bad signal come in one error.
    const both = await errorOf(memory.update(id, { content: 'Ana plays jazz piano' }, { reason: 5 as never, signal: null as never }));
    expect(both.details?.['issues']).toEqual([
      { path: ['reason'], message: expect.any(String) },
      { path: ['signal'], message: 'must be an AbortSignal, not null' },
    ]);
    expect(await stored()).toEqual(before);
  });

  it('passes it to the embedder; an abort while embedding (or, for search, while reading) throws its reason and writes nothing', async () => {
    const { memory, id, seen, stored, before, abortWhileEmbedding, abortWhileSearching, calm } = await rig();
    const reason = new Error('Ctrl-C');
    let stop = new AbortController();
    abortWhileEmbedding(stop, reason);
    await expect(memory.search('jazz', { scope: alice, signal: stop.signal })).rejects.toBe(reason);
    stop = new AbortController();
    abortWhileEmbedding(stop, reason);
    await expect(memory.update(id, { content: 'Ana plays jazz piano' }, { signal: stop.signal })).rejects.toBe(reason);
    stop = new AbortController();
    abortWhileEmbedding(stop, reason);
    await expect(memory.restore(id, 1, { signal: stop.signal })).rejects.toBe(reason);
    expect(seen).toHaveLength(3);
    // Once the query is embedded, before the access times are written.
    calm();
    stop = new AbortController();
    abortWhileSearching(stop, reason);
    await expect(memory.search('jazz', { scope: alice, signal: stop.signal })).rejects.toBe(reason);
    expect(await stored()).toEqual(before);

    // Not aborted: each call passes its signal on, and does its work.
    calm();
    seen.length = 0;
    const signal = new AbortController().signal;
    expect((await memory.search('jazz', { scope: alice, signal }))[0]?.memory.id).toBe(id);
    expect((await memory.update(id, { content: 'Ana plays jazz piano' }, { signal })).revision).toBe(3);
    expect((await memory.restore(id, 1, { signal })).content).toBe('Ana likes jazz');
    expect(seen).toEqual([signal, signal, signal]);
  });
});
