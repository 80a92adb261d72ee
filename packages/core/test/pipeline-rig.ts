import { createMemory, createMemoryPipeline, MemloomError, type CreateMemoryPipelineOptions, type LanguageModel, type MemoryStore } from '../src/index.js';
import { createFakeClock, createInMemoryStore, createTestEmbedder } from '../src/testing/index.js';

export const DIM = 16;
export const DAY = 86_400_000;
export const START = '2024-03-01T09:00:00.000Z';

export interface RigOptions extends Omit<Partial<CreateMemoryPipelineOptions>, 'memory'> {
  vectors?: Record<string, number[]>;
  store?: MemoryStore;
}

/**
 * A memory (in-memory store, test embedder, fake clock, no model of its own:
 * merges are deterministic) and a pipeline over it driven by `languageModel`
 * (none when omitted). Warnings are collected in `warnings`.
 */
export function pipelineRig(options: RigOptions = {}) {
  const { vectors = {}, store = createInMemoryStore(), languageModel, ...pipelineOptions } = options;
  const embedder = createTestEmbedder({ dimension: DIM, vectors });
  const clock = createFakeClock(START);
  const memory = createMemory({ store, embedder, clock });
  const warnings: Array<{ message: string; details?: Record<string, unknown> }> = [];
  const pipeline = createMemoryPipeline({
    memory,
    languageModel: languageModel ?? null,
    logger: { warn: (message, details) => warnings.push({ message, ...(details ? { details } : {}) }) },
    ...pipelineOptions,
  });
  return { memory, pipeline, clock, embedder, store, warnings };
}

export async function errorOf(promise: Promise<unknown> | (() => unknown)): Promise<MemloomError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    if (MemloomError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a MemloomError');
}

/** The prompt text of a model's nth request (system and user message together). */
export function promptOf(model: LanguageModel & { requests: Array<{ system?: string; prompt: string }> }, index = 0): string {
  const request = model.requests[index];
  return request ? `${request.system ?? ''}\n${request.prompt}` : '';
}
