import {
  ToolCallLLM,
  type ChatMessage,
  type ChatResponse,
  type ChatResponseChunk,
  type LLMChatParamsNonStreaming,
  type LLMChatParamsStreaming,
  type LLMMetadata,
  type ToolCall,
} from '@llamaindex/core/llms';
import { extractText } from '@llamaindex/core/utils';
import { createMemory, MemloomError, type Logger, type Memory, type MemoryStore } from '@memloom/core';
import { createFakeClock, createInMemoryStore, createTestEmbedder, type FakeClock } from '@memloom/core/testing';

export interface Reply {
  content: string;
  toolCalls?: ToolCall[];
}

/**
 * A LlamaIndex chat model for tests: answers from a function of the messages
 * it is sent (streaming or not, with tool calls when asked) and keeps every
 * request, so a test can read exactly what the agent put in front of it.
 */
export class ScriptedLLM extends ToolCallLLM {
  supportToolCall = true;
  metadata: LLMMetadata = {
    model: 'scripted',
    temperature: 0,
    topP: 1,
    contextWindow: 8192,
    tokenizer: undefined,
    structuredOutput: false,
  };
  readonly requests: ChatMessage[][] = [];

  constructor(private readonly answer: (messages: ChatMessage[], call: number) => Reply) {
    super();
  }

  chat(params: LLMChatParamsStreaming): Promise<AsyncIterable<ChatResponseChunk>>;
  chat(params: LLMChatParamsNonStreaming): Promise<ChatResponse>;
  async chat(params: LLMChatParamsStreaming | LLMChatParamsNonStreaming): Promise<AsyncIterable<ChatResponseChunk> | ChatResponse> {
    const messages = params.messages.map((message) => ({ ...message }));
    this.requests.push(messages);
    const reply = this.answer(messages, this.requests.length);
    const options = reply.toolCalls ? { toolCall: reply.toolCalls } : undefined;
    if (params.stream) {
      return (async function* () {
        yield { delta: reply.content, raw: null, ...(options ? { options } : {}) };
      })();
    }
    return { message: { role: 'assistant', content: reply.content, ...(options ? { options } : {}) }, raw: null };
  }
}

/** All text the model was shown in one request, by role. */
export function textsByRole(messages: ChatMessage[], role: ChatMessage['role']): string[] {
  return messages.filter((message) => message.role === role).map((message) => extractText(message.content));
}

/** A logger that keeps what it is told. */
export function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, warn: (message) => void warnings.push(message), debug: () => {} };
}

/** An in-memory store that throws on every call while `failing` is true: the store double for failure tests. */
export function createFailingStore(): MemoryStore & { failing: boolean; calls: number } {
  const inner = createInMemoryStore();
  const state = { failing: false, calls: 0 };
  const fail = (method: string) => {
    state.calls++;
    if (state.failing) throw new MemloomError({ code: 'STORE_ERROR', backend: 'memory', message: `${method}: disk unavailable` });
  };
  const methods = ['open', 'get', 'getMany', 'list', 'listPage', 'count', 'vectorSearch', 'textSearch', 'apply', 'deleteByScope', 'history', 'historyMany', 'getVector', 'getVectors', 'touch'] as const;
  const store = {
    name: inner.name,
    capabilities: inner.capabilities,
    close: () => inner.close(),
  } as MemoryStore;
  for (const method of methods) {
    (store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      fail(method);
      return (inner[method] as (...values: unknown[]) => Promise<unknown>).apply(inner, args);
    };
  }
  return Object.defineProperties(store, {
    failing: { get: () => state.failing, set: (value: boolean) => void (state.failing = value) },
    calls: { get: () => state.calls },
  }) as MemoryStore & { failing: boolean; calls: number };
}

/** What LangChain's adapter keeps in a memory it shares with LlamaIndex: a chat-history line and a LangGraph store item (`system` records). */
export async function addSystemRecords(memory: Memory): Promise<void> {
  await memory.add('user: my password is hunter2', { scope: { userId: 'alice', sessionId: 's1' }, category: 'system', tags: ['chat-message'], merge: false });
  await memory.add('{"text":"green tea"}', { scope: { userId: 'alice' }, category: 'system', tags: ['langgraph-item'], merge: false });
}

/** A memloom Memory over the in-memory store, the test embedder and a fake clock. */
export function setupMemory(options: { store?: MemoryStore; clock?: FakeClock; neverMerge?: boolean; freshness?: boolean } = {}) {
  const clock = options.clock ?? createFakeClock('2025-03-01T09:00:00.000Z');
  const store = options.store ?? createInMemoryStore();
  const memory = createMemory({
    store,
    embedder: createTestEmbedder({ dimension: 256 }),
    clock,
    // For bulk fixtures of look-alike lines that must stay separate memories.
    ...(options.neverMerge ? { strategy: { highSimilarity: 1, mediumSimilarity: 1 } } : {}),
    // Seed 000's freshness notes, with the 24 h default (off unless configured).
    ...(options.freshness ? { freshness: {} } : {}),
  });
  return { memory, clock, store };
}
