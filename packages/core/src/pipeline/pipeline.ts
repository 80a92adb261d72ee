import type { Clock, LanguageModel } from '../contracts.js';
import { formatZodIssues } from '../config.js';
import { MemloomError, toMemloomError } from '../errors.js';
import type { Logger, Memory } from '../memory-types.js';
import { resolvePolicy, type Policy, type PolicyOverrides, type PolicyStorage } from '../policy.js';
import type { Prompts } from '../prompts.js';
import { scopeKey, validateScope } from '../scope.js';
import type { Scope } from '../types.js';
import { createCompressionTimes } from './compression-times.js';
import { withSignal, type PipelineContext } from './context.js';
import { answeredQuestion, normalizeTurn, validateMessages, type ConversationMessage, type TurnInput } from './conversation.js';
import { runEvolution, type EvolutionReport } from './evolution.js';
import { runExtraction } from './extraction.js';
import { runLongTermCompression, type CompressLongTermOptions, type LongTermCompressionReport } from './long-term-compression.js';
import { checkedClock } from '../options.js';
import { pipelineConfigSchema, type PipelineConfigInput } from './pipeline-config.js';
import type { ExtractionReport, ReviewReport } from './reports.js';
import { runReview, type ReviewInput } from './review.js';
import { runSessionSummary, type SessionSummaryResult, type SummarizeSessionOptions } from './session-summary.js';

export interface CreateMemoryPipelineOptions extends PipelineConfigInput {
  /** The memory the pipeline reads and writes (through its strategy engine). */
  memory: Memory;
  /** The model that drives every step. @default memory.languageModel; `null` for none (deterministic paths only) */
  languageModel?: LanguageModel | null;
  /**
   * Seed 001's policy from configuration (`config.json`'s `memory` block), over the memory's own
   * (`memory.config.policy`, which `memloom`'s `createMemory` fills from its configuration); the
   * stored overrides go on top.
   */
  policy?: PolicyOverrides;
  /**
   * Where evolution writes overrides (with snapshots) and, when it can, the last long-term compression time.
   * @default the store's policy files of each call's scope (`store.policyStorage(scope)`), when the store keeps them (Markdown)
   */
  policyStorage?: PolicyStorage;
  /** @default memory.clock */
  clock?: Clock;
  logger?: Logger;
  /** Prompt overrides on top of the memory's prompts. */
  prompts?: Partial<Prompts>;
}

/** Input of `maybeEvolve` / `evolve`. */
export interface EvolveInput {
  /** The recent conversation to reflect on. @default the messages `afterTurn` saw lately in this scope */
  messages?: readonly ConversationMessage[];
  /** Which conversation is counted. */
  scope?: Scope;
  /** For `maybeEvolve`: messages new since the last call. @default messages.length */
  newMessageCount?: number;
  /**
   * Stops the reflection, throwing the signal's reason: the model call is
   * aborted in flight, and no overrides are written after an abort.
   */
  signal?: AbortSignal;
}

/** Input of `afterTurn`: the turn, plus the session when summaries should run. */
export interface AfterTurnInput extends TurnInput {
  /** The session so far, this turn included: summarized when past the thresholds, read by evolution. */
  messages?: readonly ConversationMessage[];
  /** The model's context window in tokens (token threshold and emergency cut). */
  contextWindowTokens?: number;
  countTokens?: (text: string) => number;
  /** Where the session's episode is written. @default scope */
  episodeScope?: Scope;
}

/** What `afterTurn` did, step by step. Steps that did not run are absent. */
export interface AfterTurnReport {
  extraction?: ExtractionReport;
  /** Promotion reviews of the facts this turn's boosts lifted to the threshold. */
  review?: ReviewReport;
  /** Present when `messages` were given; use `session.messages` as the session from now on. */
  session?: SessionSummaryResult;
  compression?: LongTermCompressionReport;
  evolution?: EvolutionReport;
  /** Steps that failed on a store or embedder error; the other steps still ran. (An abort of `signal` is thrown, not listed here.) */
  errors: Array<{ step: 'extraction' | 'review' | 'session' | 'compression' | 'evolution'; error: MemloomError }>;
}

/** Seeds 001 and 002's LLM-driven memory work, behind one object. See the README's "Pipeline". */
export interface MemoryPipeline {
  readonly memory: Memory;
  /**
   * The policy in effect now for a scope: the memory's policy, then this pipeline's `policy`, then the
   * stored overrides (read on every call, so a rollback applies at once).
   */
  policy(scope?: Scope): Promise<Policy>;
  /** Seed 002's background monitor on one finished turn. */
  extract(turn: TurnInput): Promise<ExtractionReport>;
  /** Seed 002's reviewer on the given facts, or on every fact in scope that is due. */
  review(input?: ReviewInput): Promise<ReviewReport>;
  /** Summarize a session's older messages into an episode when past the thresholds. */
  summarizeSession(messages: readonly ConversationMessage[], options?: SummarizeSessionOptions): Promise<SessionSummaryResult>;
  /** Seed 001's long-term compression of one scope. */
  compressLongTerm(options?: CompressLongTermOptions): Promise<LongTermCompressionReport>;
  /** Count messages and reflect every `evolutionEveryMessages` when `evolution_enabled`. */
  maybeEvolve(input: EvolveInput): Promise<EvolutionReport>;
  /** Reflect now, whatever the counter and `evolution_enabled` say. */
  evolve(input: EvolveInput): Promise<EvolutionReport>;
  /**
   * Everything the seeds run after a turn: extraction, promotion reviews of what it boosted, the session
   * summary (when `messages` are given), long-term compression (when on and the turn wrote something), evolution.
   */
  afterTurn(input: AfterTurnInput): Promise<AfterTurnReport>;
}

/** Scopes whose evolution counters and recent messages are remembered at most. */
const MAX_TRACKED_SCOPES = 1000;

/**
 * Build the pipeline over a memory. Options are validated at once
 * (INVALID_OPTIONS names the field; a bad `policy` is INVALID_CONFIG).
 * `evolution_enabled` with nowhere to write the overrides (no `policyStorage`,
 * and a store without policy files) is INVALID_OPTIONS: evolution would never run.
 */
export function createMemoryPipeline(options: CreateMemoryPipelineOptions): MemoryPipeline {
  const { memory, languageModel, policy, policyStorage, clock, logger, prompts, ...configInput } = checkOptions(options);
  const parsed = pipelineConfigSchema.safeParse(configInput);
  if (!parsed.success) throw new MemloomError({ code: 'INVALID_OPTIONS', message: `invalid pipeline options: ${formatZodIssues(parsed.error)}` });
  const configured = [
    { source: "the memory's policy", values: memory.config.policy },
    { source: 'createMemoryPipeline({ policy })', values: policy },
  ];
  // Per scope, as seed 001 keeps them: `memory/policy_overrides.json` of the folder the scope's memories are in
  // (the memory's default scope under the call's, as the memory writes them).
  const storageFor = (scope: Scope | undefined): PolicyStorage | undefined => policyStorage ?? memory.store.policyStorage?.({ ...memory.defaultScope, ...scope });
  if (resolvePolicy(configured).evolution_enabled && !policyStorage && typeof memory.store.policyStorage !== 'function') {
    throw new MemloomError({
      code: 'INVALID_OPTIONS',
      message:
        `evolution_enabled is true, but there is nowhere to write the policy overrides: the ${memory.store.name} store keeps no policy files. ` +
        'Give createMemoryPipeline a policyStorage (such as createMarkdownPolicyStorage({ root }) from @memloom/store-markdown), or set evolution_enabled to false',
      details: { store: memory.store.name },
    });
  }
  const context: PipelineContext = {
    memory,
    model: languageModel === null ? undefined : (languageModel ?? memory.languageModel),
    prompts: { ...memory.prompts, ...prompts },
    config: { ...parsed.data, modelTimeoutMs: parsed.data.modelTimeoutMs ?? memory.config.modelTimeoutMs },
    clock: checkedClock(clock, memory.clock, 'createMemoryPipeline({ clock })'),
    logger: logger ?? {},
  };
  const times = createCompressionTimes(storageFor(undefined));
  const counters = new Map<string, number>();
  const recent = new Map<string, ConversationMessage[]>();

  const scopeOf = (scope: unknown): Scope | undefined => (scope === undefined ? undefined : validateScope(scope, memory.config.limits.maxScopeLength));
  const currentPolicy = async (scope: Scope | undefined): Promise<Policy> =>
    resolvePolicy([...configured, { source: 'the stored policy overrides', values: await storageFor(scope)?.readOverrides() }]);
  const remember = <T>(map: Map<string, T>, key: string, value: T): void => {
    map.delete(key);
    map.set(key, value);
    if (map.size > MAX_TRACKED_SCOPES) map.delete(map.keys().next().value as string);
  };

  const pipeline: MemoryPipeline = {
    memory,
    policy: async (scope) => currentPolicy(scopeOf(scope)),
    extract: async (turn) => {
      const normalized = normalizeTurn(turn);
      return runExtraction(withSignal(context, turn.signal, 'extract'), { ...normalized, scope: scopeOf(normalized.scope) });
    },
    review: async (input = {}) => runReview(withSignal(context, input.signal, 'review'), { ...input, scope: scopeOf(input.scope) }),
    summarizeSession: async (messages, summaryOptions = {}) => {
      const call = withSignal(context, summaryOptions.signal, 'summarizeSession');
      const scope = scopeOf(summaryOptions.scope);
      return runSessionSummary(call, await currentPolicy(scope), validateMessages(messages), { ...summaryOptions, scope });
    },
    compressLongTerm: async (compressOptions = {}) => {
      const call = withSignal(context, compressOptions.signal, 'compressLongTerm');
      const scope = scopeOf(compressOptions.scope);
      return runLongTermCompression(call, await currentPolicy(scope), times, { ...compressOptions, scope });
    },
    evolve: async (input) => {
      const call = withSignal(context, input.signal, 'evolve');
      const scope = scopeOf(input.scope);
      const messages = input.messages ? validateMessages(input.messages) : (recent.get(scopeKey(scope ?? {})) ?? []);
      return runEvolution(call, { policy: await currentPolicy(scope), storage: storageFor(scope), messages });
    },
    maybeEvolve: async (input) => {
      const call = withSignal(context, input.signal, 'maybeEvolve');
      call.signal?.throwIfAborted();
      const scope = scopeOf(input.scope);
      const policyNow = await currentPolicy(scope);
      const key = scopeKey(scope ?? {});
      const given = input.messages ? validateMessages(input.messages) : undefined;
      if (!policyNow.evolution_enabled) return { action: 'skipped', reason: 'evolution_enabled is false', accepted: [], rejected: [] };
      const count = (counters.get(key) ?? 0) + (input.newMessageCount ?? given?.length ?? 0);
      const every = context.config.evolutionEveryMessages;
      if (count < every) {
        remember(counters, key, count);
        return { action: 'skipped', reason: `${count} of ${every} messages since the last reflection`, accepted: [], rejected: [], messagesSinceReflection: count };
      }
      remember(counters, key, 0);
      const messages = (given ?? recent.get(key) ?? []).slice(-every);
      return { ...(await runEvolution(call, { policy: policyNow, storage: storageFor(scope), messages })), messagesSinceReflection: 0 };
    },
    afterTurn: async (input) => {
      const turn = normalizeTurn(input);
      const call = withSignal(context, input.signal, 'afterTurn');
      const { signal } = call;
      signal?.throwIfAborted();
      const scope = scopeOf(turn.scope);
      const session = input.messages ? validateMessages(input.messages) : undefined;
      const episodeScope = input.episodeScope === undefined ? scope : scopeOf(input.episodeScope);
      const report: AfterTurnReport = { errors: [] };
      // Each step checks the signal before its work; an abort stops the turn's steps (it is no step's failure).
      const step = async <T>(name: AfterTurnReport['errors'][number]['step'], run: () => Promise<T>): Promise<T | undefined> => {
        try {
          return await run();
        } catch (error) {
          if (signal?.aborted) throw error;
          const wrapped = toMemloomError(error, { code: 'STORE_ERROR', message: `${name} failed` });
          context.logger.warn?.(`afterTurn: ${name} failed`, { code: wrapped.code, message: wrapped.message });
          report.errors.push({ step: name, error: wrapped });
          return undefined;
        }
      };
      const key = scopeKey(scope ?? {});
      const question = answeredQuestion(turn.user, session, recent.get(key) ?? []);
      const newMessages: ConversationMessage[] = [
        { role: 'user', content: turn.user.content, ...(turn.user.id ? { id: turn.user.id } : {}) },
        ...(turn.assistant.content ? [{ role: 'assistant' as const, content: turn.assistant.content, ...(turn.assistant.id ? { id: turn.assistant.id } : {}) }] : []),
      ];
      remember(recent, key, [...(recent.get(key) ?? []), ...newMessages].slice(-context.config.evolutionEveryMessages));
      const policyNow = await currentPolicy(scope);

      report.extraction = await step('extraction', () => runExtraction(call, { ...turn, scope, ...(question ? { question } : {}) }));
      const due = report.extraction?.dueForReview ?? [];
      if (due.length > 0) report.review = await step('review', () => runReview(call, { ids: due, ...(scope ? { scope } : {}) }));
      if (session) {
        report.session = await step('session', () =>
          runSessionSummary(call, policyNow, session, {
            ...(episodeScope ? { scope: episodeScope } : {}),
            ...(input.contextWindowTokens !== undefined ? { contextWindowTokens: input.contextWindowTokens } : {}),
            ...(input.countTokens ? { countTokens: input.countTokens } : {}),
          }),
        );
      }
      // The long-term memory only grows through writes: a turn that wrote nothing cannot have pushed it past the threshold.
      const wrote = (report.extraction?.applied.some((entry) => entry.kind === 'add' || entry.kind === 'update') ?? false) || report.session?.episode !== undefined;
      if (policyNow.long_term_compress_char_threshold > 0 && wrote) {
        report.compression = await step('compression', () => runLongTermCompression(call, policyNow, times, scope ? { scope } : {}));
      }
      if (policyNow.evolution_enabled) {
        report.evolution = await step('evolution', () =>
          pipeline.maybeEvolve({ newMessageCount: newMessages.length, ...(session ? { messages: session } : {}), ...(scope ? { scope } : {}), ...(signal ? { signal } : {}) }),
        );
      }
      return report;
    },
  };
  return pipeline;
}

function checkOptions(options: CreateMemoryPipelineOptions): CreateMemoryPipelineOptions {
  const fail = (message: string): never => {
    throw new MemloomError({ code: 'INVALID_OPTIONS', message });
  };
  if (!options || typeof options !== 'object') fail('createMemoryPipeline needs an options object with a memory');
  const memory = options.memory as Partial<Memory> | undefined;
  if (!memory || typeof memory.add !== 'function' || typeof memory.search !== 'function' || typeof memory.update !== 'function' || !memory.config) {
    fail('memory must be a Memory made by createMemory()');
  }
  if (options.languageModel != null && typeof options.languageModel.generate !== 'function') fail('languageModel must have a generate(request) method');
  const storage = options.policyStorage;
  if (storage !== undefined && (typeof storage?.readOverrides !== 'function' || typeof storage.writeOverrides !== 'function')) {
    fail('policyStorage must have readOverrides() and writeOverrides()');
  }
  return options;
}
