import { checkedSignal } from '../abort-signal.js';
import type { Clock, LanguageModel } from '../contracts.js';
import { ageString } from '../freshness.js';
import type { Logger, Memory } from '../memory-types.js';
import { callModel } from '../model-text.js';
import type { PromptMemory, Prompts, PromptText } from '../prompts.js';
import type { MemoryRecord } from '../types.js';
import { excerpt } from '../well-formed.js';
import type { PipelineConfig } from './pipeline-config.js';

/** What every pipeline step needs; built once by `createMemoryPipeline`. */
export interface PipelineContext {
  memory: Memory;
  /** Undefined when no model is configured: every step then takes its deterministic path. */
  model: LanguageModel | undefined;
  prompts: Prompts;
  config: PipelineConfig & { modelTimeoutMs: number };
  clock: Clock;
  logger: Logger;
  /** The caller's signal for this one call (each method's `signal` option): see `withSignal`. */
  signal?: AbortSignal;
}

export type ModelAnswer = { ok: true; text: string } | { ok: false; reason: string };

/**
 * The context for one call given `signal` (checked at the edge). Steps check
 * it before each unit of work, and `askModel` aborts its model call with it.
 */
export function withSignal(context: PipelineContext, signal: unknown, what: string): PipelineContext {
  const checked = checkedSignal(signal, what);
  return checked ? { ...context, signal: checked } : context;
}

/**
 * Ask the model with the pipeline's timeout. Never throws for the model;
 * `reason` says why there is no answer. The call's own abort (`context.signal`)
 * aborts the model call and is thrown (see `callModel`).
 */
export async function askModel(context: PipelineContext, request: PromptText): Promise<ModelAnswer> {
  context.signal?.throwIfAborted();
  if (!context.model) return { ok: false, reason: 'no language model configured' };
  const result = await callModel(context.model, { ...request, signal: context.signal }, context.config.modelTimeoutMs);
  if (!result.ok) return { ok: false, reason: result.error?.message ?? `${context.model.id} failed` };
  return { ok: true, text: result.text };
}

/** A record as prompts show it. */
export function toPromptMemory(record: MemoryRecord, nowMs: number): PromptMemory {
  return {
    id: record.id,
    content: record.content,
    category: record.category,
    updatedAt: record.updatedAt,
    age: `${ageString(nowMs - Date.parse(record.updatedAt))} ago`,
    importance: record.importance,
  };
}

/** The first line of a model answer, cut short, for reports and logs. */
export function shortText(text: string, limit = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  // At most `limit` characters with the "…", never ending on half of an emoji.
  return flat.length > limit ? excerpt(flat, limit - 1) : flat;
}
