import { describe, expect, it, vi } from 'vitest';
import { parseConsolidation, type PolicyStorage } from '../src/index.js';
import { createInMemoryPolicyStorage, createRecord, createScriptedModel } from '../src/testing/index.js';
import { DAY, pipelineRig, promptOf } from './pipeline-rig.js';

const alice = { userId: 'alice' };
const HOUR = 3_600_000;

/** Alice's long-term memory, Bob's, and a model whose answer the test sets once ids are known. */
async function compressionRig(options: { threshold?: number; storage?: PolicyStorage; model?: boolean } = {}) {
  const state = { answer: '{"groups": []}' as string | (() => Promise<string>) };
  const model = createScriptedModel(() => (typeof state.answer === 'string' ? state.answer : state.answer()));
  const storage = options.storage ?? createInMemoryPolicyStorage();
  const rig = pipelineRig({
    ...(options.model === false ? {} : { languageModel: model }),
    policy: { long_term_compress_char_threshold: options.threshold ?? 60 },
    policyStorage: storage,
  });
  const { memory, clock } = rig;
  const tea = (await memory.add('The user likes tea', { scope: alice, sources: ['m1'], tags: ['drinks'] })).memory;
  clock.advance(DAY);
  const greenTea = (await memory.add('The user likes green tea in the morning', { scope: alice, sources: ['m2'], context: 'What do you drink first thing?' })).memory;
  const dog = (await memory.add('The user has a dog named Rex', { scope: alice, category: 'core' })).memory;
  const episode = (await memory.add('[2024-03-02 09:00] Talked about tea', { scope: alice, category: 'episode' })).memory;
  const system = (await memory.add('Answer briefly', { scope: alice, category: 'system', source: 'system' })).memory;
  const bobs = (await memory.add('The user likes coffee', { scope: { userId: 'bob' } })).memory;
  clock.advance(HOUR);
  return { ...rig, state, model, storage, ids: { tea: tea.id, greenTea: greenTea.id, dog: dog.id, episode: episode.id, system: system.id, bob: bobs.id }, records: { tea, greenTea } };
}

describe('long-term compression', () => {
  it('is off while long_term_compress_char_threshold is 0, and waits for the threshold', async () => {
    const off = await compressionRig({ threshold: 0 });
    expect(await off.pipeline.compressLongTerm({ scope: alice })).toMatchObject({ action: 'skipped', reason: 'long_term_compress_char_threshold is 0 (off)' });
    const below = await compressionRig({ threshold: 1_000 });
    const report = await below.pipeline.compressLongTerm({ scope: alice });
    expect(report).toMatchObject({ action: 'skipped', charactersBefore: 120 });
    expect(report.reason).toBe('120 characters <= threshold 1000');
    expect(below.model.requests).toHaveLength(0);
  });

  it('compresses only past the threshold: at exactly it, nothing is asked or written', async () => {
    const at = await compressionRig({ threshold: 120 });
    expect(await at.pipeline.compressLongTerm({ scope: alice })).toMatchObject({ action: 'skipped', charactersBefore: 120, reason: '120 characters <= threshold 120' });
    expect(at.model.requests).toHaveLength(0);
  });

  it('keeps a consolidated memory verified only when every memory it holds was', async () => {
    const { pipeline, memory, state, ids } = await compressionRig();
    // What the user said is verified; tea is made a fact the model inferred.
    expect((await memory.get(ids.greenTea))?.verified).toBe(true);
    await memory.update(ids.tea, { verified: false }, { scope: alice });
    state.answer = JSON.stringify({ groups: [{ keep: ids.greenTea, absorb: [ids.tea], content: 'The user likes tea, green in the morning' }] });
    expect(await pipeline.compressLongTerm({ scope: alice })).toMatchObject({ action: 'compressed', source: 'model' });
    expect((await memory.get(ids.greenTea))?.verified).toBe(false);
  });

  it('consolidates with the model in one atomic write, keeping what it absorbed', async () => {
    const { pipeline, memory, store, storage, state, model, ids, records, clock } = await compressionRig();
    state.answer = `Here you go:\n\`\`\`json\n${JSON.stringify({ groups: [{ keep: ids.greenTea, absorb: [ids.tea], content: 'The user likes tea, green in the morning' }] })}\n\`\`\``;
    const apply = vi.spyOn(store, 'apply');
    const report = await pipeline.compressLongTerm({ scope: alice });
    expect(apply).toHaveBeenCalledTimes(1);
    expect(report).toMatchObject({ action: 'compressed', source: 'model', charactersBefore: 120, charactersAfter: 120 - 18 - 39 + 40, lastCompressionKeptIn: 'policyStorage' });
    expect(report.lastCompressedAt).toBe(clock.iso());
    expect(await memory.get(ids.tea)).toBeUndefined();
    const survivor = await memory.get(ids.greenTea);
    expect(survivor).toMatchObject({ content: 'The user likes tea, green in the morning', sources: ['m2', 'm1'], tags: ['drinks'], updatedAt: records.greenTea.updatedAt });
    expect(survivor?.metadata.absorbed).toEqual([expect.objectContaining({ id: ids.tea, content: 'The user likes tea', sources: ['m1'] })]);
    const last = (await memory.history(ids.greenTea)).at(-1);
    expect(last).toMatchObject({ trigger: 'passive_decay', action: 'compress' });
    expect(last?.before?.content).toBe('The user likes green tea in the morning');
    // The rewritten text drops the context it was said in; the history keeps it.
    expect(survivor).not.toHaveProperty('context');
    expect(last?.before?.context).toBe('What do you drink first thing?');
    expect(last?.reason).toContain(`absorbed ${ids.tea}`);
    expect((await memory.search('green morning tea', { scope: alice }))[0]?.memory.id).toBe(ids.greenTea);
    expect(await storage.readLastCompression?.(alice)).toEqual(new Date(clock.now()));
    const prompt = promptOf(model);
    expect(prompt).toContain('it holds 120 characters and should stay under 60');
    expect(prompt).not.toContain('Answer briefly');
    expect(prompt).not.toContain('coffee');
    expect(await memory.get(ids.bob)).toBeDefined();
  });

  it('compresses a consolidated memory later from the consolidated text, not from the text before it', async () => {
    const { pipeline, memory, state, ids, clock } = await compressionRig();
    state.answer = JSON.stringify({ groups: [{ keep: ids.greenTea, absorb: [ids.tea], content: 'The user drinks tea, green at dawn' }] });
    expect((await pipeline.compressLongTerm({ scope: alice })).action).toBe('compressed');
    // The memory has no model: its passes compress deterministically, to "The user drinks tea…" first.
    for (const days of [10, 30]) {
      clock.advance(days * DAY);
      await memory.maintain({ scope: alice });
    }
    // From the consolidation's text ("#user #drinks #tea" from the summary, "#user #likes #green #morning" from the text before it).
    expect(await memory.get(ids.greenTea)).toMatchObject({ level: 'tag', content: '#user #drinks #green #dawn' });
  });

  it('stores consolidated text cut inside an emoji well formed (U+FFFD for the lone half)', async () => {
    const { pipeline, memory, state, ids } = await compressionRig();
    state.answer = JSON.stringify({ groups: [{ keep: ids.greenTea, absorb: [ids.tea], content: 'The user likes tea \uD83C' }] });
    expect((await pipeline.compressLongTerm({ scope: alice })).action).toBe('compressed');
    expect((await memory.get(ids.greenTea))?.content).toBe('The user likes tea \uFFFD');
  });

  it('runs at most once a day per scope, unless forced', async () => {
    const { pipeline, clock, model } = await compressionRig();
    expect((await pipeline.compressLongTerm({ scope: alice })).action).toBe('compressed');
    clock.advance(23 * HOUR);
    expect(await pipeline.compressLongTerm({ scope: alice })).toMatchObject({ action: 'skipped', reason: 'compressed less than 24 h ago' });
    expect((await pipeline.compressLongTerm({ scope: alice, force: true })).action).toBe('compressed');
    clock.advance(25 * HOUR);
    expect((await pipeline.compressLongTerm({ scope: alice })).action).toBe('compressed');
    expect(model.requests).toHaveLength(3);
  });

  it('runs again exactly 24 h after the last compression, not 1 ms before (P-X13)', async () => {
    const { pipeline, clock } = await compressionRig();
    expect((await pipeline.compressLongTerm({ scope: alice })).action).toBe('compressed');
    clock.advance(24 * HOUR - 1);
    expect(await pipeline.compressLongTerm({ scope: alice })).toMatchObject({ action: 'skipped', reason: 'compressed less than 24 h ago' });
    clock.advance(1);
    expect((await pipeline.compressLongTerm({ scope: alice })).action).toBe('compressed');
  });

  it('skips every group it cannot apply safely, with why', async () => {
    const { pipeline, memory, state, ids } = await compressionRig();
    state.answer = JSON.stringify({
      groups: [
        { keep: 5 },
        { keep: 'nope', absorb: [], content: 'x' },
        { keep: ids.greenTea, absorb: [ids.bob], content: 'x' },
        { keep: ids.dog, absorb: [ids.system], content: 'x' },
        { keep: ids.episode, absorb: [ids.tea], content: 'x' },
        { keep: ids.dog, absorb: [ids.dog], content: 'x' },
        { keep: ids.greenTea, absorb: [ids.tea], content: 'The user likes tea'.repeat(10) },
        { keep: ids.greenTea, absorb: [ids.tea], content: '   ' },
        { keep: ids.dog, absorb: [], content: 'The user has a dog named Rex' },
        { keep: ids.dog, absorb: [ids.tea], content: 'The user has a dog, Rex, and likes tea' },
        { keep: ids.greenTea, absorb: [ids.tea], content: 'again' },
      ],
    });
    const report = await pipeline.compressLongTerm({ scope: alice });
    expect(report.skipped.map((entry) => entry.reason)).toEqual([
      'keep: Invalid input: expected string, received number; content: Invalid input: expected string, received undefined',
      'unknown id nope',
      `unknown id ${ids.bob}`,
      `unknown id ${ids.system}`,
      'mixes episodes with facts',
      'an id appears twice in the group',
      'the consolidated text is longer than the memories it replaces',
      'empty content',
      'changes nothing',
      `${ids.tea} already in an earlier group`,
    ]);
    expect(report.applied).toHaveLength(1);
    const survivor = await memory.get(ids.dog);
    expect(survivor).toMatchObject({ category: 'core', content: 'The user has a dog, Rex, and likes tea' });
  });

  it('parseConsolidation refuses a group with a system memory or memories of two scopes, even when it was shown them', () => {
    const atIso = '2024-03-01T09:00:00.000Z';
    const record = (id: string, content: string, scope: { userId: string }, category: 'fact' | 'system' = 'fact') =>
      createRecord({ id, content, scope, atIso }, { importance: 1, category, type: 'user' });
    const memories = new Map(
      [
        record('tea', 'The user likes tea', alice),
        record('brief', 'Answer briefly', alice, 'system'),
        record('english', 'Answer in English', alice, 'system'),
        record('coffee', 'The user likes coffee', { userId: 'bob' }),
      ].map((entry) => [entry.id, entry]),
    );
    const answer = JSON.stringify({
      groups: [
        { keep: 'brief', absorb: ['english'], content: 'Answer briefly, in English' },
        { keep: 'tea', absorb: ['coffee'], content: 'The user likes tea' },
      ],
    });
    const parsed = parseConsolidation(answer, memories, 10_000);
    expect(parsed.groups).toEqual([]);
    expect(parsed.skipped.map((entry) => entry.reason)).toEqual(['system memories are never consolidated', 'mixes memories of different scopes']);
  });

  it.each([
    ['garbage', 'I would merge the tea memories.', 'the answer holds no JSON object'],
    ['JSON with the wrong shape', '{"groups": "tea ones"}', 'the JSON has no "groups" array'],
    ['broken JSON', '{"groups": [', 'the JSON object in the answer is not closed'],
    ['a JSON array', '[{"keep": "x"}]', 'the answer is a JSON array, not an object'],
  ])('falls back to lossless deduplication when the model answers with %s', async (_, answer, reason) => {
    const { pipeline, memory, state, ids, warnings } = await compressionRig();
    state.answer = answer;
    const report = await pipeline.compressLongTerm({ scope: alice });
    expect(report).toMatchObject({ action: 'compressed', source: 'fallback', modelFallback: reason });
    expect(await memory.get(ids.tea)).toBeUndefined();
    expect((await memory.get(ids.greenTea))?.content).toBe('The user likes green tea in the morning');
    expect((await memory.get(ids.greenTea))?.metadata.absorbed).toEqual([expect.objectContaining({ id: ids.tea })]);
    expect(warnings.some((warning) => warning.message.startsWith('long-term compression: model answer not used'))).toBe(true);
  });

  it('writes nothing when a memory changes during the compression, and tries again next time', async () => {
    const { pipeline, memory, state, ids, storage } = await compressionRig();
    state.answer = async () => {
      await memory.update(ids.tea, { tags: ['edited meanwhile'] });
      return JSON.stringify({ groups: [{ keep: ids.greenTea, absorb: [ids.tea], content: 'The user likes green tea' }] });
    };
    const report = await pipeline.compressLongTerm({ scope: alice });
    expect(report).toMatchObject({ action: 'skipped', reason: 'memories changed during the compression; nothing was written' });
    expect(await memory.get(ids.tea)).toBeDefined();
    expect((await memory.get(ids.greenTea))?.content).toBe('The user likes green tea in the morning');
    expect(await storage.readLastCompression?.(alice)).toBeUndefined();
  });

  it('without a model deduplicates; without a storage that keeps times, the limit lasts for this process', async () => {
    const storage: PolicyStorage = { readOverrides: async () => undefined, writeOverrides: async () => {} };
    const { pipeline, memory, ids } = await compressionRig({ model: false, storage });
    const report = await pipeline.compressLongTerm({ scope: alice });
    expect(report).toMatchObject({ action: 'compressed', source: 'fallback', lastCompressionKeptIn: 'process' });
    expect(report.modelFallback).toBeUndefined();
    expect(await memory.get(ids.tea)).toBeUndefined();
    expect((await pipeline.compressLongTerm({ scope: alice })).action).toBe('skipped');
  });
});
