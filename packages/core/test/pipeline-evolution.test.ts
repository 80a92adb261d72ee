import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, validateSuggestions, type ConversationMessage } from '../src/index.js';
import { createInMemoryPolicyStorage, createScriptedModel } from '../src/testing/index.js';
import { errorOf, pipelineRig, promptOf } from './pipeline-rig.js';

const alice = { userId: 'alice' };

function messages(count: number): ConversationMessage[] {
  return Array.from({ length: count }, (_, index) => ({ role: index % 2 === 0 ? ('user' as const) : ('assistant' as const), content: `line ${index + 1}` }));
}

describe('evolution: every ~20 messages when enabled', () => {
  it('does nothing while evolution_enabled is false', async () => {
    const model = createScriptedModel('{"retrieve_limit": 15}');
    const { pipeline } = pipelineRig({ languageModel: model, policyStorage: createInMemoryPolicyStorage() });
    expect(await pipeline.maybeEvolve({ messages: messages(40) })).toMatchObject({ action: 'skipped', reason: 'evolution_enabled is false' });
    expect(model.requests).toHaveLength(0);
  });

  it('counts messages, reflects at 20, snapshots the overrides and writes the change', async () => {
    const model = createScriptedModel('The user keeps asking about old plans.\n{"retrieve_limit": 15}');
    const storage = createInMemoryPolicyStorage({ recent_days: 5 });
    const { pipeline, clock } = pipelineRig({ languageModel: model, policyStorage: storage, policy: { evolution_enabled: true } });
    expect(await pipeline.maybeEvolve({ scope: alice, messages: messages(12) })).toMatchObject({ action: 'skipped', messagesSinceReflection: 12 });
    expect(await pipeline.maybeEvolve({ scope: { userId: 'bob' }, messages: messages(12) })).toMatchObject({ messagesSinceReflection: 12 });
    const report = await pipeline.maybeEvolve({ scope: alice, messages: messages(8), newMessageCount: 8 });
    expect(report).toMatchObject({
      action: 'updated',
      source: 'model',
      accepted: [{ key: 'retrieve_limit', from: 10, to: 15 }],
      overrides: { recent_days: 5, retrieve_limit: 15 },
      messagesSinceReflection: 0,
    });
    expect(storage.overrides).toEqual({ recent_days: 5, retrieve_limit: 15 });
    expect(storage.snapshots).toEqual([{ at: new Date(clock.now()), overrides: { recent_days: 5 } }]);
    expect((await pipeline.policy()).retrieve_limit).toBe(15);
    const prompt = promptOf(model);
    expect(prompt).toContain('- retrieve_limit = 10 (integer 1..100): memory blocks returned for a query');
    expect(prompt).toContain('- recent_days = 5 (integer 0..90)');
    expect(prompt).toContain('- session_summary_token_percent = 75 (number 1..100)');
    expect(prompt).not.toContain('evolution_enabled =');
    expect(prompt).toContain('User: line 1');
  });

  it('rolls back when the overrides are deleted', async () => {
    const storage = createInMemoryPolicyStorage();
    const { pipeline } = pipelineRig({ languageModel: createScriptedModel('{"retrieve_limit": 30}'), policyStorage: storage, policy: { evolution_enabled: true } });
    await pipeline.evolve({ messages: messages(4) });
    expect((await pipeline.policy()).retrieve_limit).toBe(30);
    storage.deleteOverrides();
    expect((await pipeline.policy()).retrieve_limit).toBe(10);
  });

  it('rejects and logs suggestions out of range, of the wrong type, unknown, or for the switch itself', async () => {
    const answer = JSON.stringify({
      retrieve_limit: 500,
      recent_days: '7',
      session_summary_keep_count: 2.5,
      foo: 1,
      evolution_enabled: false,
      session_summary_message_threshold: 20,
      session_summary_token_percent: 60,
    });
    const storage = createInMemoryPolicyStorage();
    const { pipeline, warnings } = pipelineRig({ languageModel: createScriptedModel(answer), policyStorage: storage, policy: { evolution_enabled: true } });
    const report = await pipeline.evolve({ messages: messages(4) });
    expect(report.accepted).toEqual([{ key: 'session_summary_token_percent', from: 75, to: 60 }]);
    expect(report.rejected.map((entry) => [entry.key, entry.reason])).toEqual([
      ['retrieve_limit', 'retrieve_limit: Too big: expected number to be <=100 (allowed: integer 1..100)'],
      ['recent_days', 'recent_days: Invalid input: expected number, received string (allowed: integer 0..90)'],
      ['session_summary_keep_count', 'session_summary_keep_count: Invalid input: expected int, received number (allowed: integer 0..100)'],
      ['foo', 'unknown parameter'],
      ['evolution_enabled', "evolution_enabled is the operator's switch; evolution never changes it"],
      ['session_summary_message_threshold', 'same as the current value'],
    ]);
    expect(storage.overrides).toEqual({ session_summary_token_percent: 60 });
    expect(warnings.filter((warning) => warning.message === 'evolution: suggestion rejected')).toHaveLength(6);
  });

  it.each([
    ['garbage', createScriptedModel('Looks fine to me.'), 'the answer holds no JSON object'],
    ['a JSON array', createScriptedModel('[{"retrieve_limit": 15}]'), 'the answer is a JSON array, not an object'],
    ['a thrown error', createScriptedModel(new Error('boom')), /boom/],
  ])('writes nothing when the model answers with %s', async (_, model, reason) => {
    const storage = createInMemoryPolicyStorage({ recent_days: 5 });
    const { pipeline } = pipelineRig({ languageModel: model, policyStorage: storage, policy: { evolution_enabled: true } });
    const report = await pipeline.evolve({ messages: messages(4) });
    expect(report).toMatchObject({ action: 'unchanged', source: 'fallback' });
    expect(report.modelFallback).toMatch(reason);
    expect(storage.overrides).toEqual({ recent_days: 5 });
    expect(storage.snapshots).toEqual([]);
  });

  it('writes nothing for {}, without a model, without a storage, or over invalid stored overrides', async () => {
    const storage = createInMemoryPolicyStorage();
    const empty = pipelineRig({ languageModel: createScriptedModel('{}'), policyStorage: storage });
    expect(await empty.pipeline.evolve({ messages: messages(2) })).toMatchObject({ action: 'unchanged', reason: 'no acceptable change suggested' });
    expect(await pipelineRig({ policyStorage: storage }).pipeline.evolve({ messages: messages(2) })).toMatchObject({ action: 'skipped' });
    expect(await pipelineRig({ languageModel: createScriptedModel('{}') }).pipeline.evolve({ messages: messages(2) })).toMatchObject({
      action: 'skipped',
      reason: 'no policyStorage to write overrides to',
    });
    expect(storage.overrides).toBeUndefined();

    const broken = createInMemoryPolicyStorage();
    broken.overrides = { retrieve_limit: 'many' };
    const model = createScriptedModel('{"recent_days": 4}');
    // A hand-broken overrides file is a configuration error: loud, typed, and never overwritten.
    const error = await errorOf(pipelineRig({ languageModel: model, policyStorage: broken }).pipeline.evolve({ messages: messages(2) }));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain('the stored policy overrides: retrieve_limit');
    expect(model.requests).toHaveLength(0);
    expect(broken.overrides).toEqual({ retrieve_limit: 'many' });
  });

  it('validateSuggestions checks against the policy schema alone', () => {
    expect(validateSuggestions({ recent_days: 0, long_term_compress_char_threshold: 50_000 }, DEFAULT_POLICY).accepted).toEqual([
      { key: 'recent_days', from: 3, to: 0 },
      { key: 'long_term_compress_char_threshold', from: 0, to: 50_000 },
    ]);
    expect(validateSuggestions({ __proto__: 1, toString: 2 } as never, DEFAULT_POLICY).rejected.map((entry) => entry.reason)).toEqual(['unknown parameter']);
  });
});
