import { createMemory, MemloomError, scopeKey, type MemoryStore } from '@memloom/core';
import { createInMemoryPolicyStorage, createInMemoryStore, createTestEmbedder, policyStoragePerScope, type InMemoryPolicyStorage } from '@memloom/core/testing';
import { describe, expect, it } from 'vitest';
import { memloomBlock } from '../src/index.js';

const alice = { userId: 'alice' };

describe("the memory's policy reaches the block's pipeline", () => {
  it("runs the memory's policy (memloom's configuration) after each flush", async () => {
    const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder(), policy: { long_term_compress_char_threshold: 4000, session_summary_keep_count: 6 } });
    const block = memloomBlock({ memory, scope: alice, llm: null });
    expect(await block.pipeline.policy(alice)).toMatchObject({ long_term_compress_char_threshold: 4000, session_summary_keep_count: 6, retrieve_limit: 10 });
  });

  it("reads the stored overrides of the block's scope, not of the memory's default scope", async () => {
    // A store that keeps seed 001's policy files per scope, as the Markdown store does.
    const files = new Map<string, InMemoryPolicyStorage>();
    const store = createInMemoryStore() as MemoryStore;
    store.policyStorage = policyStoragePerScope(files);
    const memory = createMemory({ store, embedder: createTestEmbedder(), scope: { agentId: 'helper' } });
    const scope = { userId: 'alice', agentId: 'helper' };
    for (const text of ['coffee in the morning', 'coffee with milk', 'coffee beans from Kenya', 'espresso coffee after lunch']) await memory.add(text, { scope, merge: false });
    const lines = async () =>
      String((await memloomBlock({ memory, scope: alice, llm: null, minScore: 0 }).get([{ id: 'q', role: 'user', content: 'coffee' }]))[0]?.content ?? '')
        .split('\n')
        .filter((line) => line.startsWith('- '));
    expect(await lines()).toHaveLength(4);
    files.set(scopeKey(scope), createInMemoryPolicyStorage({ retrieve_limit: 2 }));
    expect(await lines()).toHaveLength(2);
  });

  it('refuses evolution_enabled when the store keeps no policy files (it would never run)', () => {
    const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder(), policy: { evolution_enabled: true } });
    let caught: unknown;
    try {
      memloomBlock({ memory, scope: alice, llm: null });
    } catch (error) {
      caught = error;
    }
    expect(MemloomError.hasCode(caught, 'INVALID_OPTIONS')).toBe(true);
    expect((caught as MemloomError).message).toMatch(/evolution_enabled is true, but there is nowhere to write the policy overrides/);
  });
});
