import { createMemory, MemloomError } from '@memloom/core';
import { createInMemoryStore, createTestEmbedder } from '@memloom/core/testing';
import { describe, expect, it } from 'vitest';
import { memloomBlock } from '../src/index.js';

const alice = { userId: 'alice' };

describe("the memory's policy reaches the block's pipeline", () => {
  it("runs the memory's policy (memloom's configuration) after each flush", async () => {
    const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder(), policy: { long_term_compress_char_threshold: 4000, session_summary_keep_count: 6 } });
    const block = memloomBlock({ memory, scope: alice, llm: null });
    expect(await block.pipeline.policy(alice)).toMatchObject({ long_term_compress_char_threshold: 4000, session_summary_keep_count: 6, retrieve_limit: 10 });
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
