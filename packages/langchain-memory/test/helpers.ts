import { SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { messageText } from '../src/messages.js';
import { createMemory, MemloomError, type CreateMemoryOptions, type Memory } from '@memloom/core';
import { createFakeClock, createInMemoryStore, createTestEmbedder, type FakeClock, type TestEmbedder } from '@memloom/core/testing';

export const DIM = 32;

export interface Rig {
  memory: Memory;
  clock: FakeClock;
  embedder: TestEmbedder;
  store: ReturnType<typeof createInMemoryStore>;
}

/** A memory over the in-memory store, a deterministic embedder and a fake clock. */
export function rig(vectors: Record<string, number[]> = {}, options: Partial<CreateMemoryOptions> = {}): Rig {
  const clock = createFakeClock('2024-05-01T09:00:00.000Z');
  const embedder = createTestEmbedder({ dimension: DIM, vectors });
  const store = createInMemoryStore();
  const memory = createMemory({ store, embedder, clock, ...options });
  return { memory, clock, embedder, store };
}

/** The system prompt a fake model received on its n-th call. */
export function systemPromptOf(calls: ReadonlyArray<{ messages: BaseMessage[] }>, index: number): string {
  const call = calls[index];
  if (!call) throw new Error(`the model was called ${calls.length} times, not ${index + 1}`);
  const first = call.messages[0];
  if (!first || !SystemMessage.isInstance(first)) throw new Error('the first message the model received is not a system message');
  return messageText(first);
}

/** The part of a prompt inside the <memories> fence ("" when there is none). */
export function memoriesBlock(prompt: string): string {
  const start = prompt.indexOf('<memories>');
  const end = prompt.indexOf('</memories>');
  return start >= 0 && end > start ? prompt.slice(start, end) : '';
}

export async function errorOf(work: Promise<unknown> | (() => unknown)): Promise<MemloomError> {
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (error) {
    if (MemloomError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a MemloomError');
}

