import type { ChatMessage } from '@llamaindex/core/llms';
import { createMemory as createChatMemory } from '@llamaindex/core/memory';
import { extractText } from '@llamaindex/core/utils';
import { agent } from '@llamaindex/workflow';
import { describe, expect, it } from 'vitest';
import { memloomBlock, workingMemoryBlock } from '../src/index.js';
import { ScriptedLLM, setupMemory, textsByRole, type Reply } from './helpers.js';

const alice = { userId: 'alice' };

/**
 * The model behind the agent: on the first request of a run that has no
 * tool result yet it may write the overview through the tool; otherwise it
 * answers from what it was shown (so the test can see memory reach it).
 */
function assistantModel() {
  return new ScriptedLLM((messages: ChatMessage[], call: number): Reply => {
    const last = messages.at(-1);
    const lastText = last ? extractText(last.content) : '';
    const toolResult = last && (last.options as { toolResult?: unknown } | undefined)?.toolResult;
    if (!toolResult && /trip/i.test(lastText)) {
      return {
        content: '',
        toolCalls: [{ id: `call-${call}`, name: 'update_working_memory', input: { overview: '## Task\nPlan the Kyoto trip in April.' } }],
      };
    }
    const memories = textsByRole(messages, 'memory').join('\n');
    return { content: /vegetarian/.test(memories) ? 'Try Shigetsu: it serves vegetarian shojin ryori.' : 'Any restaurant will do.' };
  });
}

describe('an agent workflow (@llamaindex/workflow) with memloom memory', () => {
  it('remembers across two sessions what the user said in the first', async () => {
    const { memory } = setupMemory();

    // Session 1: a short-term budget small enough that the conversation overflows into memloom.
    const llm1 = assistantModel();
    const block1 = memloomBlock({ memory, scope: alice });
    const workingMemory = workingMemoryBlock({ maxRounds: 3, minRounds: 1 });
    const chat1 = createChatMemory({ tokenLimit: 80, shortTermTokenLimitRatio: 0.5, memoryBlocks: [block1, workingMemory] });
    const session1 = agent({ llm: llm1, tools: [workingMemory.asTool()], memory: chat1, timeout: 10 });

    const first = await session1.run('I am planning a trip to Kyoto in April. I am vegetarian, so no meat or fish for me.');
    expect(first.data.result).toBe('Any restaurant will do.');
    expect(workingMemory.overview).toBe('## Task\nPlan the Kyoto trip in April.');
    await session1.run('My budget is around two thousand euros, flights included.');
    await session1.run('I would also like to see the bamboo forest in Arashiyama early in the morning.');
    await session1.run('I am allergic to shellfish.');
    await block1.whenIdle();
    // LlamaIndex flushed the overflow on its own; flush() records the rest when the session ends.
    expect(await memory.count({ scope: alice })).toBeGreaterThan(0);
    await block1.flush(chat1);
    const stored = (await memory.list({ scope: alice })).map((record) => record.content);
    expect(stored).toEqual(
      expect.arrayContaining([
        'I am planning a trip to Kyoto in April.',
        'I am vegetarian, so no meat or fish for me.',
        'My budget is around two thousand euros, flights included.',
        'I am allergic to shellfish.',
      ]),
    );
    expect(stored.join('\n')).not.toMatch(/Any restaurant will do|Working memory updated/);

    // Session 2: a fresh LlamaIndex Memory, a new block, the same memloom memory.
    const llm2 = assistantModel();
    const chat2 = createChatMemory({ memoryBlocks: [memloomBlock({ memory, scope: alice })] });
    const session2 = agent({ llm: llm2, memory: chat2, timeout: 10 });
    const answer = await session2.run('Which restaurants in Kyoto would suit a vegetarian like me?');

    expect(answer.data.result).toBe('Try Shigetsu: it serves vegetarian shojin ryori.');
    const shown = textsByRole(llm2.requests[0]!, 'memory').join('\n');
    expect(shown).toContain('I am vegetarian, so no meat or fish for me.');
    expect(shown).not.toContain('budget');

    // Another user in the same memloom memory starts with nothing.
    const llm3 = assistantModel();
    const bobChat = createChatMemory({ memoryBlocks: [memloomBlock({ memory, scope: { userId: 'bob' } })] });
    const bobAnswer = await agent({ llm: llm3, memory: bobChat, timeout: 10 }).run('Which restaurants in Kyoto would suit a vegetarian like me?');
    expect(bobAnswer.data.result).toBe('Any restaurant will do.');
    expect(textsByRole(llm3.requests[0]!, 'memory')).toEqual([]);
  });
});
