import { SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { messageText } from '../src/messages.js';
import { createMemory, MemloomError, type CreateMemoryOptions, type GenerateRequest, type LanguageModel, type Memory } from '@memloom/core';
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

export interface PendingCall {
  request: GenerateRequest;
  answer(text: string): void;
}

/**
 * A memloom language model whose every call waits until the test answers it. It does not heed
 * its request's signal itself: an abort must come back to the caller whether or not a model
 * stops when told.
 */
export function controlledModel() {
  const calls: PendingCall[] = [];
  const waiting: Array<() => void> = [];
  let answerEveryCall: string | undefined;
  const model: LanguageModel = {
    id: 'test/controlled',
    generate: (request) =>
      new Promise<string>((resolve) => {
        calls.push({ request, answer: resolve });
        if (answerEveryCall !== undefined) resolve(answerEveryCall);
        for (const wake of waiting.splice(0)) wake();
      }),
  };
  return {
    model,
    calls,
    /** The call at `index` (0-based), once it is made; an error if `operation` ends first. */
    async call(index: number, operation: Promise<unknown>): Promise<PendingCall> {
      const ended = operation.then(
        () => 'ended',
        () => 'ended',
      );
      while (calls.length <= index) {
        if ((await Promise.race([new Promise<void>((resolve) => waiting.push(resolve)), ended])) === 'ended') {
          throw new Error(`the operation ended before model call ${index + 1}`);
        }
      }
      return calls[index] as PendingCall;
    },
    /**
     * Abort with `reason` while `call` is in flight. When the adapter did not pass the run's
     * signal on, the call's own signal stays alone: the model then answers it, and every later
     * call, with `lateAnswer`, as a real one would, and memloom's work goes on (so that the test
     * fails instead of hanging).
     */
    abortDuring(call: PendingCall, stop: AbortController, reason: unknown, lateAnswer: string): void {
      stop.abort(reason);
      if (call.request.signal?.aborted) return;
      answerEveryCall = lateAnswer;
      call.answer(lateAnswer);
    },
  };
}
