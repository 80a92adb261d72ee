import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { scopeKey, type Memory, type MemoryStore, type PolicyOverrides, type Scope } from '@memloom/core';
import { policyStoragePerScope, type InMemoryPolicyStorage } from '@memloom/core/testing';
import { createMemloomMiddleware, type MemloomMiddlewareOptions } from '../src/index.js';
import { errorOf, memoriesBlock, rig, systemPromptOf } from './helpers.js';

const erin: Scope = { userId: 'erin' };

async function coffeeMemory(policy?: PolicyOverrides, policyFiles?: Map<string, InMemoryPolicyStorage>): Promise<Memory> {
  const { memory, store } = rig({}, policy ? { policy } : {});
  if (policyFiles) (store as MemoryStore).policyStorage = policyStoragePerScope(policyFiles);
  for (const text of ['coffee one', 'coffee two', 'coffee three', 'coffee four', 'coffee five']) await memory.add(text, { scope: erin, merge: false });
  return memory;
}

/** One user turn "coffee": the model calls memory_search without a limit, then answers. */
async function coffeeTurn(memory: Memory, options: MemloomMiddlewareOptions = {}) {
  const model = fakeModel();
  model.respondWithTools([{ name: 'memory_search', args: { query: 'coffee' }, id: 'call-1' }]);
  model.respond(new AIMessage('ok'));
  const agent = createAgent({ model, tools: [], middleware: [createMemloomMiddleware(memory, { recordTurns: false, summarize: false, ...options })], checkpointer: new MemorySaver() });
  const result = await agent.invoke({ messages: [new HumanMessage('coffee')] }, { context: { userId: 'erin' }, configurable: { thread_id: 't1' } });
  const injected = (memoriesBlock(systemPromptOf(model.calls, 0)).match(/^- \[/gm) ?? []).length;
  const toolResult = result.messages.find((message) => ToolMessage.isInstance(message));
  const found = Number(String(toolResult?.content).match(/^Found (\d+)/)?.[1] ?? 0);
  return { injected, found };
}

describe("the memory's policy reaches the middleware", () => {
  it("retrieve_limit set on the memory (memloom's configuration) is what is injected and memory_search's default", { timeout: 30_000 }, async () => {
    const memory = await coffeeMemory({ retrieve_limit: 2 });
    expect(await memory.search('coffee', { scope: erin })).toHaveLength(2);
    expect(await coffeeTurn(memory)).toEqual({ injected: 2, found: 2 });
    // The middleware's own policy goes over the memory's.
    expect(await coffeeTurn(memory, { policy: { retrieve_limit: 3 } })).toEqual({ injected: 3, found: 3 });
  });

  it("a store's stored overrides of the user's scope go on top", { timeout: 30_000 }, async () => {
    const files = new Map<string, InMemoryPolicyStorage>();
    const memory = await coffeeMemory({ retrieve_limit: 2 }, files);
    expect(await coffeeTurn(memory, { policy: { retrieve_limit: 3 } })).toEqual({ injected: 3, found: 3 });
    files.get(scopeKey(erin))!.overrides = { retrieve_limit: 1 };
    expect(await coffeeTurn(memory, { policy: { retrieve_limit: 3 } })).toEqual({ injected: 1, found: 1 });
  });

  it('evolution_enabled on a store with no policy files is refused when the middleware is made', async () => {
    const configured = await coffeeMemory({ evolution_enabled: true });
    const error = await errorOf(() => createMemloomMiddleware(configured));
    expect(error.code).toBe('INVALID_OPTIONS');
    expect(error.message).toMatch(/evolution_enabled is true, but there is nowhere to write the policy overrides/);
    expect((await errorOf(() => createMemloomMiddleware(rig().memory, { policy: { evolution_enabled: true } }))).code).toBe('INVALID_OPTIONS');
    expect(() => createMemloomMiddleware(configured, { policy: { evolution_enabled: false } })).not.toThrow();
  });
});
