import { describe, expect, it } from 'vitest';
import { createMemory, createMemoryPipeline, DEFAULT_POLICY, MemloomError, scopeKey, type MemoryStore, type Scope } from '../src/index.js';
import { createFakeClock, createInMemoryPolicyStorage, createInMemoryStore, createScriptedModel, createTestEmbedder, policyStoragePerScope, type InMemoryPolicyStorage } from '../src/testing/index.js';
import { errorOf } from './pipeline-rig.js';

const alice: Scope = { userId: 'alice' };
const bob: Scope = { userId: 'bob' };

/** An in-memory store that keeps seed 001's policy files per scope, as the Markdown store does. */
function storeWithPolicyFiles(): { store: MemoryStore; files: Map<string, InMemoryPolicyStorage> } {
  const files = new Map<string, InMemoryPolicyStorage>();
  const store = createInMemoryStore() as MemoryStore;
  store.policyStorage = policyStoragePerScope(files);
  return { store, files };
}

async function memoryWith(options: { store?: MemoryStore; policy?: Record<string, unknown>; warnings?: string[] } = {}) {
  const memory = createMemory({
    ...(options.warnings ? { logger: { warn: (message: string) => void options.warnings!.push(message) } } : {}),
    store: options.store ?? createInMemoryStore(),
    embedder: createTestEmbedder({ dimension: 16 }),
    clock: createFakeClock('2024-03-01T10:00:00Z'),
    ...(options.policy ? { policy: options.policy } : {}),
  });
  for (const scope of [alice, bob]) {
    for (const text of ['coffee in the morning', 'coffee with milk', 'coffee beans from Kenya', 'espresso coffee after lunch']) {
      await memory.add(text, { scope, merge: false });
    }
  }
  return memory;
}

describe("the memory's policy (memory.config.policy)", () => {
  it('is validated like the rest of the configuration, and its retrieve_limit is the default search count', async () => {
    const memory = await memoryWith({ policy: { retrieve_limit: 2, recent_days: 5 } });
    expect(memory.config.policy).toEqual({ ...DEFAULT_POLICY, retrieve_limit: 2, recent_days: 5 });
    expect(memory.config.retrieval.defaultLimit).toBe(2);
    expect(await memory.search('coffee', { scope: alice })).toHaveLength(2);

    // retrieval.defaultLimit, when given, still decides the search count.
    const both = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder({ dimension: 16 }), policy: { retrieve_limit: 2 }, retrieval: { defaultLimit: 3 } });
    expect(both.config.retrieval.defaultLimit).toBe(3);
    expect(createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder({ dimension: 16 }) }).config.policy).toEqual(DEFAULT_POLICY);

    for (const policy of [{ retrieve_limit: 0 }, { retrieve_limit: 'many' }, { retrive_limit: 3 }]) {
      const error = await errorOf(() => createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder({ dimension: 16 }), policy: policy as never }));
      expect(error.code).toBe('INVALID_OPTIONS');
      expect(error.message).toMatch(/policy/);
    }
  });

  it("is the base layer of every pipeline over the memory, under the pipeline's own policy", async () => {
    const memory = await memoryWith({ policy: { retrieve_limit: 2, session_summary_keep_count: 6 } });
    const plain = createMemoryPipeline({ memory, languageModel: null });
    expect(await plain.policy()).toMatchObject({ retrieve_limit: 2, session_summary_keep_count: 6, recent_days: 3 });
    const own = createMemoryPipeline({ memory, languageModel: null, policy: { retrieve_limit: 4 } });
    expect(await own.policy()).toMatchObject({ retrieve_limit: 4, session_summary_keep_count: 6 });
  });
});

describe("a store's policy files (seed 001: configuration first, then the workspace overrides file)", () => {
  it("search without a limit reads the scope's stored retrieve_limit, on every call", async () => {
    const { store, files } = storeWithPolicyFiles();
    const warnings: string[] = [];
    const memory = await memoryWith({ store, warnings });
    expect(await memory.search('coffee', { scope: alice })).toHaveLength(4);
    files.get(scopeKey(alice))!.overrides = { retrieve_limit: 1 };
    expect(await memory.search('coffee', { scope: alice })).toHaveLength(1);
    // Only that scope's file; an explicit limit wins; other keys leave the count alone.
    expect(await memory.search('coffee', { scope: bob })).toHaveLength(4);
    expect(await memory.search('coffee', { scope: alice, limit: 3 })).toHaveLength(3);
    files.get(scopeKey(bob))!.overrides = { recent_days: 7 };
    expect(await memory.search('coffee', { scope: bob })).toHaveLength(4);
    // Deleting the overrides rolls back at once.
    files.get(scopeKey(alice))!.deleteOverrides();
    expect(await memory.search('coffee', { scope: alice })).toHaveLength(4);
    // A hand-broken value is warned of and left out: the configured count holds, and reads go on.
    files.get(scopeKey(alice))!.overrides = { retrieve_limit: 'many', recent_days: 500, some_future_key: 1 };
    expect(await memory.search('coffee', { scope: alice })).toHaveLength(4);
    expect(warnings).toEqual([
      expect.stringContaining(`the stored policy overrides' retrieve_limit "many" is left out`),
      expect.stringContaining(`the stored policy overrides' recent_days 500 is left out`),
    ]);
    // So is a file the store cannot read.
    files.get(scopeKey(alice))!.readOverrides = async () => {
      throw new MemloomError({ code: 'STORE_CORRUPT', message: 'policy_overrides.json:1: not valid JSON' });
    };
    expect(await memory.search('coffee', { scope: alice })).toHaveLength(4);
    expect(warnings.at(-1)).toBe('the stored policy overrides were not read (the configured policy holds): policy_overrides.json:1: not valid JSON');
  });

  it("renderContext's recent notes follow the scope's stored recent_days", async () => {
    const { store, files } = storeWithPolicyFiles();
    const memory = await memoryWith({ store });
    await memory.add('Talked with Anna about a trip to Kyoto', { scope: alice, category: 'episode' });
    const context = (await memory.renderContext('coffee', { scope: alice, limit: 1 })).split('\n');
    expect(context.filter((line) => line.startsWith('- '))).toHaveLength(2);
    expect(context.at(-2)).toContain('Kyoto');
    files.get(scopeKey(alice))!.overrides = { recent_days: 0 };
    expect(await memory.renderContext('coffee', { scope: alice, limit: 1 })).not.toContain('Kyoto');
    // A recentDays given wins.
    expect(await memory.renderContext('coffee', { scope: alice, limit: 1, recentDays: 1 })).toContain('Kyoto');
  });

  it("a pipeline given no policyStorage reads and writes each call's scope's files", async () => {
    const { store, files } = storeWithPolicyFiles();
    const memory = await memoryWith({ store, policy: { evolution_enabled: true } });
    const pipeline = createMemoryPipeline({ memory, languageModel: createScriptedModel('{"retrieve_limit": 2}') });
    const report = await pipeline.evolve({ scope: alice, messages: [{ role: 'user', content: 'what did I say last month?' }] });
    expect(report).toMatchObject({ action: 'updated', overrides: { retrieve_limit: 2 } });
    expect(files.get(scopeKey(alice))!.overrides).toEqual({ retrieve_limit: 2 });
    expect(files.has(scopeKey(bob))).toBe(false);
    expect((await pipeline.policy(alice)).retrieve_limit).toBe(2);
    expect((await pipeline.policy(bob)).retrieve_limit).toBe(10);
    // The search of that scope follows what evolution wrote.
    expect(await memory.search('coffee', { scope: alice })).toHaveLength(2);
    expect(await memory.search('coffee', { scope: bob })).toHaveLength(4);
  });
});

describe("a store's policy files under the memory's default scope", () => {
  it('a pipeline call and a search without a scope use the default scope\'s files', async () => {
    const { store, files } = storeWithPolicyFiles();
    const memory = createMemory({ store, embedder: createTestEmbedder({ dimension: 16 }), scope: { userId: 'me' }, policy: { evolution_enabled: true } });
    for (const text of ['coffee one', 'coffee two', 'coffee three']) await memory.add(text, { merge: false });
    const pipeline = createMemoryPipeline({ memory, languageModel: createScriptedModel('{"retrieve_limit": 2}') });
    expect(await pipeline.evolve({ messages: [{ role: 'user', content: 'hello' }] })).toMatchObject({ action: 'updated' });
    expect(files.get(scopeKey({ userId: 'me' }))?.overrides).toEqual({ retrieve_limit: 2 });
    expect(files.get(scopeKey({}))?.overrides).toBeUndefined();
    expect(await memory.search('coffee')).toHaveLength(2);
    expect((await pipeline.policy()).retrieve_limit).toBe(2);
  });
});

describe('evolution_enabled with nowhere to write the overrides', () => {
  it('is refused when the pipeline is made (INVALID_OPTIONS naming the store and the way out)', async () => {
    const memory = await memoryWith();
    const fromOptions = await errorOf(() => createMemoryPipeline({ memory, policy: { evolution_enabled: true } }));
    expect(fromOptions.code).toBe('INVALID_OPTIONS');
    expect(fromOptions.message).toMatch(/evolution_enabled is true, but there is nowhere to write the policy overrides: the memory store keeps no policy files/);
    expect(fromOptions.message).toMatch(/policyStorage/);
    // From the memory's own policy (memloom's configuration file, MEMLOOM_POLICY) too.
    const configured = await memoryWith({ policy: { evolution_enabled: true } });
    expect((await errorOf(() => createMemoryPipeline({ memory: configured }))).code).toBe('INVALID_OPTIONS');
    // The pipeline's own policy may turn it off; a policyStorage gives it a place.
    expect(() => createMemoryPipeline({ memory: configured, policy: { evolution_enabled: false } })).not.toThrow();
    const storage = createInMemoryPolicyStorage();
    const pipeline = createMemoryPipeline({ memory: configured, policyStorage: storage, languageModel: createScriptedModel('{"recent_days": 5}') });
    expect(await pipeline.evolve({ messages: [{ role: 'user', content: 'hello' }] })).toMatchObject({ action: 'updated' });
    expect(storage.overrides).toEqual({ recent_days: 5 });
  });
});
