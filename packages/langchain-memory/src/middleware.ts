import { AIMessage, RemoveMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { REMOVE_ALL_MESSAGES } from '@langchain/langgraph';
import { getInteropZodObjectShape, isInteropZodObject, type InteropZodObject } from '@langchain/core/utils/types';
import { createMiddleware } from 'langchain';
import {
  createMemoryPipeline,
  describeValue,
  MemloomError,
  scopeKey,
  toMemloomError,
  WorkingMemoryTracker,
  type AfterTurnReport,
  type LanguageModel,
  type Memory,
  type MemoryFilter,
  type MemoryPipeline,
  type MemoryRecord,
  type PolicyOverrides,
  type Scope,
  type WorkingMemoryConfigInput,
} from '@memloom/core';
import { z } from 'zod';
import { toLanguageModel, type ChatModelLike } from './adapters.js';
import { fromSessionSummary, summarizedEpisodeIds, toConversation } from './conversation.js';
import { checkedFilter, invalidOptions, throwIfRunAborted } from './errors.js';
import { isUserMessage, latestUserInput, messageText } from './messages.js';
import { overviewScope, readOverview, WORKING_MEMORY_TOOL, workingMemoryWriteTool } from './overview.js';
import { buildMemoryPrompt } from './prompt.js';
import { resolveScope, threadOf, type RunInfo, type ScopeOption } from './scope.js';
import { contextWindowOf, countMessageTokens, type TokenCounter } from './tokens.js';
import { createMemloomTools, DEFAULT_RECALL_FILTER } from './tools.js';

/** The step of the middleware that failed, as given to `onError`. */
export type MemloomMiddlewareStep = 'retrieve' | 'record' | 'review' | 'summarize' | 'compress' | 'evolve';

export interface MemloomMiddlewareOptions {
  /**
   * Whose memories to use. @default `userId`, `agentId`, `sessionId` from `runtime.context`, then
   * `configurable` (snake_case accepted). A run with no scope at all fails with INVALID_SCOPE.
   */
  scope?: ScopeOption;
  /**
   * The agent's context schema (the one given to `createAgent({ contextSchema })`), so a `scope`
   * function sees its fields: LangChain hands a middleware only the context keys the middleware
   * declares, which are `userId`, `agentId`, `sessionId` (and snake_case) without this. Only the
   * keys are used; the agent validates the values.
   * @default none: the scope function sees only the scope fields of the context
   */
  contextSchema?: InteropZodObject;
  /**
   * The chat model (or memloom language model) for extraction and session summaries: a LangChain
   * chat model is adapted with `fromLangChainChatModel`. `null`: deterministic paths only.
   * @default the memory's `languageModel`, else the deterministic paths
   */
  model?: ChatModelLike | LanguageModel | null;
  /**
   * Seed 001's policy (`retrieve_limit`, `recent_days`, `session_summary_*`, …), over the memory's own
   * (`memory.config.policy`: memloom's configuration file, `MEMLOOM_POLICY`, `createMemory({ policy })`);
   * unset keys keep the memory's values, and a store's stored overrides (Markdown) go on top.
   */
  policy?: PolicyOverrides;
  /**
   * A pipeline made with core's `createMemoryPipeline` (for policy storage, evolution or its own
   * limits). It brings its own model and policy, so `model` and `policy` must not be given too.
   * @default a pipeline over `memory` with `model` and `policy`
   */
  pipeline?: MemoryPipeline;
  /** Which memories are injected and seen by the tools. @default facts, core facts and episodes ({@link DEFAULT_RECALL_FILTER}) */
  filter?: MemoryFilter;
  /** Register `memory_search`, `memory_append` and `memory_forget` with the agent. @default true */
  tools?: boolean;
  /** After each turn, extract what is worth remembering (seed 002's background monitor). @default true */
  recordTurns?: boolean;
  /** After a turn, summarize the conversation when it passes the policy's message or token threshold. @default true */
  summarize?: boolean;
  /**
   * Seed 003's working memory: the thread's overview in every prompt, the `working_memory_write`
   * tool, and a reminder after too many rounds without an update. `false` turns all of it off.
   * @default {} (maxRounds 5, minRounds 3, tokenThresholdPercent 70)
   */
  workingMemory?: WorkingMemoryConfigInput | false;
  /** Tool calls that count as updating the overview (a successful result resets the count). @default ['working_memory_write'] */
  overviewTools?: string[];
  /** The model's context window, for the token thresholds. @default the model's profile `maxInputTokens`, once seen */
  contextWindowTokens?: number;
  /** Tokens of one message's text. @default core's `estimateTokens` (about four characters, or one CJK character, per token) */
  countTokens?: TokenCounter;
  /**
   * Most tokens the injected `<memories>` block may take (counted with `countTokens`). Memories are
   * taken best-ranked first, then the daily notes newest first; what does not fit is left out (a
   * best memory longer than the whole budget goes in cut). The index (no user text) keeps its
   * first lines that fit.
   * @default a tenth of the context window when it is known (`contextWindowTokens` or the model's profile), else 1024
   */
  memoryTokenLimit?: number;
  /**
   * Called instead of throwing when a memory step fails, so the agent goes on without it. An abort
   * of the run's signal is not a failure: it is always thrown, as LangChain expects.
   * @default none: the error propagates and the run fails
   */
  onError?: (error: MemloomError, step: MemloomMiddlewareStep) => void;
}

/** Tokens of the `<memories>` block when neither `memoryTokenLimit` nor the context window is known (LlamaIndex block's default). */
const DEFAULT_MEMORY_TOKENS = 1024;

/** Share of a known context window the `<memories>` block may take by default. */
const MEMORY_SHARE_OF_WINDOW = 0.1;

/** Most threads (rounds) and turns (retrieved memories) tracked at once; the least recently used is dropped. */
const MAX_TRACKED_THREADS = 1000;

/** The pipeline's after-turn steps, as the middleware names them. */
const STEP_NAMES: Record<AfterTurnReport['errors'][number]['step'], MemloomMiddlewareStep> = {
  extraction: 'record',
  review: 'review',
  session: 'summarize',
  compression: 'compress',
  evolution: 'evolve',
};

/** Context fields the middleware reads (LangChain hands a middleware only the context keys it declares). */
const contextSchema = z.object({
  userId: z.string().optional(),
  user_id: z.string().optional(),
  agentId: z.string().optional(),
  agent_id: z.string().optional(),
  sessionId: z.string().optional(),
  session_id: z.string().optional(),
});

/**
 * Memory for a `createAgent` agent:
 * - before each model call, the memories relevant to the user's latest message (and the last
 *   `recent_days` of daily notes) go into the system prompt, fenced in `<memories>` with
 *   seed 000's freshness notes (when the memory has `freshness` configured), followed by the thread's working-memory overview and, when due,
 *   seed 003's reminder;
 * - after each turn, core's pipeline extracts what the user said (with the model when there is
 *   one, deterministically when not) through the strategy engine, and summarizes the
 *   conversation past seed 001's thresholds: older messages are replaced by one summary message
 *   and kept as an episode of the thread; the run's `signal` goes with it, so aborting the run
 *   stops those model calls and writes nothing further;
 * - the agent gets `memory_search`, `memory_append`, `memory_forget` and `working_memory_write`.
 */
export function createMemloomMiddleware(memory: Memory, options: MemloomMiddlewareOptions = {}) {
  assertMemory(memory);
  const pipeline = pipelineFor(memory, options);
  const filter = checkedFilter(options.filter, DEFAULT_RECALL_FILTER, 'createMemloomMiddleware');
  const countText = options.countTokens;
  const workingMemory = options.workingMemory === false ? undefined : (options.workingMemory ?? {});
  const trackerConfig = workingMemory && { overviewPath: WORKING_MEMORY_TOOL, detailPath: 'memory_append (slot "today")', ...workingMemory };
  // Fail on bad working-memory options now, not at the first model call.
  if (trackerConfig) new WorkingMemoryTracker(trackerConfig, 'langchain');
  const overviewTools = new Set(options.overviewTools ?? [WORKING_MEMORY_TOOL]);
  const trackers = new Map<string, WorkingMemoryTracker>();
  // Per turn, not per thread: two runs of one user at once (no thread_id) must not take each other's.
  const retrievedByTurn = new Map<string, MemoryRecord[]>();
  let contextWindow = options.contextWindowTokens;
  const memoryTokenLimit = options.memoryTokenLimit;
  if (memoryTokenLimit !== undefined && !(Number.isInteger(memoryTokenLimit) && memoryTokenLimit > 0)) {
    throw invalidOptions(`memoryTokenLimit must be a whole number of tokens above 0, got ${describeValue(memoryTokenLimit)}`);
  }
  const schema = contextSchemaWith(options.contextSchema);
  const scopeOption = options.scope ? { scope: options.scope } : {};

  const tools = [
    ...(options.tools === false
      ? []
      : createMemloomTools(memory, { filter, defaultLimit: async (scope) => (await pipeline.policy(scope)).retrieve_limit, ...scopeOption })),
    ...(workingMemory ? [workingMemoryWriteTool(memory, scopeOption)] : []),
  ];

  /**
   * A memory step that failed: to onError, else thrown as a MemloomError. Given the run's signal, once
   * the run is aborted the abort goes to LangChain instead, never to onError: it is the run's, not the step's.
   */
  const fail = (error: unknown, step: MemloomMiddlewareStep, signal?: AbortSignal): void => {
    throwIfRunAborted(signal, error);
    const wrapped = toMemloomError(error, { code: 'STORE_ERROR', backend: 'langchain', message: `memory step "${step}" failed` });
    if (!options.onError) throw wrapped;
    options.onError(wrapped, step);
  };

  return createMiddleware({
    name: 'MemloomMiddleware',
    contextSchema: schema,
    tools,

    wrapModelCall: async (request, handler) => {
      const run = runInfo(request.runtime);
      let addition = '';
      try {
        const scope = await resolveScope(options.scope, run, 'createMemloomMiddleware');
        contextWindow ??= contextWindowOf(request.model);
        const key = threadOf(run) ?? scopeKey(scope);
        const threadScope = overviewScope(scope, run);
        const input = latestUserInput(request.messages);
        let workingMemoryPart: { overview: string; reminder: string } | undefined;
        if (trackerConfig) {
          const tracker = touch(trackers, key, () => new WorkingMemoryTracker(trackerConfig, 'langchain'));
          if (wroteOverview(request.messages, overviewTools)) tracker.markUpdated();
          const overview = (await readOverview(memory, threadScope))?.content ?? '';
          // Seed 003 counts rounds of the conversation: the model calls of one user message (a tool loop) are one round.
          const check = tracker.checkRound(
            {
              tokensUsed: countMessageTokens([request.systemMessage, ...request.messages], countText),
              tokensMax: contextWindow,
              messageCount: request.messages.length,
              overviewBytes: Buffer.byteLength(overview, 'utf8'),
            },
            roundOf(request.messages, input),
          );
          workingMemoryPart = { overview, reminder: check.reminder };
        }
        const prompt = await buildMemoryPrompt(memory, {
          scope,
          query: input.map(messageText).join('\n').trim(),
          filter,
          policy: await pipeline.policy(scope),
          exclude: summarizedEpisodeIds(request.messages),
          tokenLimit: memoryTokenLimit ?? (contextWindow ? Math.floor(contextWindow * MEMORY_SHARE_OF_WINDOW) : DEFAULT_MEMORY_TOKENS),
          ...(countText ? { countTokens: countText } : {}),
          ...(workingMemoryPart ? { workingMemory: workingMemoryPart } : {}),
          ...(request.runtime.signal ? { signal: request.runtime.signal } : {}),
        });
        // Kept for the turn's extraction (afterAgent), which runs only when turns are recorded.
        if (options.recordTurns !== false) {
          const known = touch(retrievedByTurn, turnKey(key, input), () => []);
          for (const record of prompt.retrieved) if (!known.some((entry) => entry.id === record.id)) known.push(record);
        }
        addition = prompt.text;
      } catch (error) {
        fail(error, 'retrieve', request.runtime.signal);
      }
      if (addition === '') return handler(request);
      const separator = messageText(request.systemMessage).trim() === '' ? '' : '\n\n';
      return handler({ ...request, systemMessage: request.systemMessage.concat(`${separator}${addition}`) });
    },

    afterAgent: async (state, runtime) => {
      const record = options.recordTurns !== false;
      const summarize = options.summarize !== false;
      if (!record && !summarize) return undefined;
      const run = runInfo(runtime);
      // The run's signal (`agent.invoke(input, { signal })`, LangGraph's timeouts): it stops the pipeline's model calls.
      const signal = runtime.signal;
      let scope: Scope;
      try {
        scope = await resolveScope(options.scope, run, 'createMemloomMiddleware');
      } catch (error) {
        fail(error, record ? 'record' : 'summarize', signal);
        return undefined;
      }
      const key = threadOf(run) ?? scopeKey(scope);
      const input = latestUserInput(state.messages);
      const turn = turnKey(key, input);
      const retrieved = retrievedByTurn.get(turn) ?? [];
      retrievedByTurn.delete(turn);
      const userText = input.map(messageText).join('\n').trim();
      const session = summarize
        ? {
            messages: toConversation(state.messages),
            episodeScope: overviewScope(scope, run),
            ...(contextWindow !== undefined ? { contextWindowTokens: contextWindow } : {}),
            ...(countText ? { countTokens: countText } : {}),
          }
        : undefined;

      let summarized: BaseMessage[] | undefined;
      if (record && userText !== '') {
        const answer = [...state.messages].reverse().find((message) => AIMessage.isInstance(message));
        const lastInput = input.at(-1);
        const report = await pipeline
          .afterTurn({
            scope,
            user: { content: userText, ...(lastInput?.id ? { id: lastInput.id } : {}) },
            ...(answer ? { assistant: { content: messageText(answer), ...(answer.id ? { id: answer.id } : {}) } } : {}),
            retrieved,
            ...session,
            ...(signal ? { signal } : {}),
          })
          .catch((error: unknown) => {
            fail(error, 'record', signal);
            return undefined;
          });
        for (const entry of report?.errors ?? []) fail(entry.error, STEP_NAMES[entry.step], signal);
        if (report?.session && report.session.action !== 'none') summarized = fromSessionSummary(report.session, state.messages);
      } else if (session) {
        try {
          const result = await pipeline.summarizeSession(session.messages, {
            scope: session.episodeScope,
            ...(session.contextWindowTokens !== undefined ? { contextWindowTokens: session.contextWindowTokens } : {}),
            ...(session.countTokens ? { countTokens: session.countTokens } : {}),
            ...(signal ? { signal } : {}),
          });
          if (result.action !== 'none') summarized = fromSessionSummary(result, state.messages);
        } catch (error) {
          fail(error, 'summarize', signal);
        }
      }
      return summarized ? { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...summarized] } : undefined;
    },
  });
}

/** The pipeline the middleware runs after each turn: the one given, or one over `memory`. */
function pipelineFor(memory: Memory, options: MemloomMiddlewareOptions): MemoryPipeline {
  if (options.pipeline) {
    if (options.model !== undefined || options.policy !== undefined) {
      throw invalidOptions('give either a pipeline or model / policy: a pipeline brings its own model and policy');
    }
    if (options.pipeline.memory !== memory) throw invalidOptions('the pipeline must be made over the same memory as the middleware');
    return options.pipeline;
  }
  const model = options.model;
  return createMemoryPipeline({
    memory,
    ...(model === null ? { languageModel: null } : model ? { languageModel: toLanguageModel(model) } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
  });
}

/**
 * Whether the model's previous step wrote the overview: a successful result of
 * an overview tool among the messages after the last AI message. Each step's
 * results are seen by exactly one model call, so nothing is counted twice.
 */
function wroteOverview(messages: readonly BaseMessage[], overviewTools: ReadonlySet<string>): boolean {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as BaseMessage;
    if (AIMessage.isInstance(message)) return false;
    if (ToolMessage.isInstance(message) && message.status !== 'error' && message.name && overviewTools.has(message.name)) return true;
  }
  return false;
}

/**
 * The round (seed 003) the messages are at: the id of the user's latest message (the last of
 * `input`, their latestUserInput), which LangGraph gives every message; without one, how many user
 * messages there are and the latest one's text.
 */
function roundOf(messages: readonly BaseMessage[], input: readonly BaseMessage[]): string {
  const latest = input.at(-1);
  if (latest?.id) return `id:${latest.id}`;
  return `${messages.filter(isUserMessage).length}:${latest ? messageText(latest) : ''}`;
}

/**
 * The key of one turn: its thread (or user) and the id of the user's latest message, which
 * LangGraph gives every message. Two runs at once have different messages; the model calls of
 * one run (a tool loop) share it.
 */
function turnKey(threadKey: string, latestInput: readonly BaseMessage[]): string {
  const id = latestInput.at(-1)?.id;
  return id ? JSON.stringify([threadKey, id]) : threadKey;
}

/** The entry for `key`, made when missing, moved to the most recently used end; the oldest entry goes past the limit. */
function touch<T>(map: Map<string, T>, key: string, make: () => T): T {
  const value = map.get(key) ?? make();
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_TRACKED_THREADS) map.delete(map.keys().next().value as string);
  return value;
}

/**
 * The middleware's context schema: its own scope fields plus the keys of the app's schema (any
 * value), so LangChain hands those keys to the middleware too. Typed as the scope fields only,
 * so the agent's own schema keeps the types of the rest.
 */
function contextSchemaWith(appSchema: InteropZodObject | undefined): typeof contextSchema {
  if (appSchema === undefined) return contextSchema;
  if (!isInteropZodObject(appSchema)) throw invalidOptions('contextSchema must be a zod object schema, like the one given to createAgent');
  const ownKeys = new Set(Object.keys(contextSchema.shape));
  const appKeys = Object.keys(getInteropZodObjectShape(appSchema)).filter((key) => !ownKeys.has(key));
  // Optional: a zod object key of z.unknown() is required, and the app's optional fields may be left out.
  return contextSchema.extend(Object.fromEntries(appKeys.map((key) => [key, z.unknown().optional()]))) as unknown as typeof contextSchema;
}

function runInfo(runtime: { context?: unknown; configurable?: Record<string, unknown> }): RunInfo {
  return { context: runtime.context, ...(runtime.configurable ? { configurable: runtime.configurable } : {}) };
}

function assertMemory(memory: unknown): asserts memory is Memory {
  const candidate = memory as Partial<Memory> | undefined;
  if (!candidate || typeof candidate.search !== 'function' || typeof candidate.add !== 'function') {
    throw invalidOptions('createMemloomMiddleware needs a Memory (from createMemory) as its first argument');
  }
}
