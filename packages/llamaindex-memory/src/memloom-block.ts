import type { LLM } from '@llamaindex/core/llms';
import { BaseMemoryBlock, type MemoryMessage } from '@llamaindex/core/memory';
import {
  createMemoryPipeline,
  lastCharacters,
  longestFitting,
  MemloomError,
  recentNotes,
  renderContextBlock,
  type Logger,
  type Memory,
  type MemoryFilter,
  type MemoryPipeline,
  type MemoryRecord,
  type Scope,
} from '@memloom/core';
import { z } from 'zod';
import { fromLlamaIndexLLM } from './language-model.js';
import { assertMessages, countTokens, isToolCall, isUserTurn, MESSAGE_ROLES, messageText } from './messages.js';
import {
  blockIdSchema,
  consoleLogger,
  errorMessage,
  filterSchema,
  loggerSchema,
  memorySchema,
  parseOptions,
  prioritySchema,
  requireScope,
  tokenLimitSchema,
} from './options.js';
import { ALREADY_RECORDED, recordMessages } from './record.js';

export interface MemloomBlockOptions {
  /** The memloom memory to read and write: `createMemory()` from `memloom`, or core's `createMemory({ store, embedder })`. */
  memory: Memory;
  /** Whose memories these are. Required, with at least one of userId, agentId, sessionId; nothing outside it is read or written. */
  scope: Scope;
  /** @default 'memloom' */
  id?: string;
  /** LlamaIndex puts higher priorities first; 0 means "always included". @default 2 */
  priority?: number;
  /**
   * The model that extracts facts from flushed messages (ADD / UPDATE / BOOST /
   * DELETE / SKIP). Without it, the memory's own language model is used when it
   * has one, else the deterministic extraction (the user's first-person
   * statements); `null` always takes the deterministic extraction. Give `llm`
   * or `pipeline`, not both.
   */
  llm?: LLM | null;
  /**
   * A pipeline of your own (`createMemoryPipeline` from core, over this same
   * memory), for its policy storage, thresholds or prompts.
   * @default createMemoryPipeline({ memory, languageModel: llm })
   */
  pipeline?: MemoryPipeline;
  /**
   * Most memories `get` finds by search (the daily notes of the policy's `recent_days` come on top).
   * @default the pipeline's policy `retrieve_limit` (10)
   */
  limit?: number;
  /** Memories scoring below this (0..1, see core's retrieval) are left out as irrelevant. @default 0.2 */
  minScore?: number;
  /** Most tokens the returned message may take (LlamaIndex's tokenizer); the lowest-ranked memories are dropped to fit. @default 1024 */
  tokenLimit?: number;
  /**
   * How many of the latest user and assistant messages form the search query.
   * The default, the latest one, keeps an earlier topic from outranking the
   * current question; raise it when users answer in short follow-ups. @default 1
   */
  queryWindow?: number;
  /**
   * Only memories matching this filter are returned; `{}` for every category.
   * @default facts, core facts and episodes: `{ category: ['core', 'fact', 'episode'] }` (not `system` records, such as LangChain's chat history)
   */
  filter?: MemoryFilter;
  /** Role of the returned message. @default 'memory' */
  messageRole?: (typeof MESSAGE_ROLES)[number];
  /** First line inside `<memories>`. @default core's header (memories are information, not instructions) */
  header?: string;
  /** Where failures are reported. @default console.warn */
  logger?: Logger;
}

const optionsSchema = z
  .object({
    memory: memorySchema,
    scope: z.unknown().optional(),
    id: blockIdSchema.default('memloom'),
    priority: prioritySchema.default(2),
    llm: z.custom<LLM>((value) => typeof (value as Partial<LLM> | undefined)?.chat === 'function', { message: 'must be a LlamaIndex LLM' }).nullable().optional(),
    limit: z.number().int().min(1).max(100).optional(),
    minScore: z.number().min(0).max(1).default(0.2),
    tokenLimit: tokenLimitSchema.default(1024),
    queryWindow: z.number().int().min(1).max(50).default(1),
    filter: filterSchema,
    pipeline: z.custom<MemoryPipeline>((value) => typeof (value as Partial<MemoryPipeline> | undefined)?.afterTurn === 'function', { message: 'must be a memloom MemoryPipeline (from createMemoryPipeline)' }).optional(),
    messageRole: z.enum(MESSAGE_ROLES).default('memory'),
    header: z.string().min(1).optional(),
    logger: loggerSchema.optional(),
  })
  .strict()
  .refine((options) => !(options.llm !== undefined && options.pipeline), { message: 'give llm or pipeline, not both (the pipeline has its own model)', path: ['llm'] })
  .refine((options) => !options.pipeline || options.pipeline.memory === options.memory, { message: 'the pipeline must be built over the same memory', path: ['pipeline'] });

/** Messages kept for a retry after the store failed; beyond this the oldest are dropped (and logged). */
const MAX_PENDING = 200;
/** Message ids remembered (as offered, and as recorded), so a message flushed twice is recorded once. */
const MAX_REMEMBERED_IDS = 10_000;

/**
 * A LlamaIndex memory block backed by memloom.
 *
 * - `put` (LlamaIndex calls it with the messages it flushes out of short-term
 *   memory) runs each turn through memloom's pipeline: fact extraction with
 *   the model (or deterministically), every ADD through the strategy engine (a
 *   restated fact merges into the memory it repeats, a related one is kept
 *   beside it, a new one is created). A failing store is logged and the
 *   messages are retried on the next flush; the agent's turn goes on.
 * - `get` searches the memories relevant to the latest messages (the policy's
 *   `retrieve_limit`), adds the daily notes of its last `recent_days` (seed
 *   001) and returns them as one fenced `<memories>` message, with seed 000's
 *   freshness notes on stale ones (when the memory has `freshness`
 *   configured), within `tokenLimit`. A failing store is logged and gives no
 *   memories.
 */
export class MemloomMemoryBlock extends BaseMemoryBlock {
  readonly memory: Memory;
  readonly scope: Scope;
  private readonly settings: z.output<typeof optionsSchema>;
  /** The pipeline flushed turns go through. */
  readonly pipeline: MemoryPipeline;
  private readonly logger: Logger;
  /** Ids of messages done with (recorded or passed over). */
  private readonly recorded = new Set<string>();
  /** Ids of every message handed to `put`, in the order they came: LlamaIndex flushes from its cursor on, so they form a range. */
  private readonly offered = new Set<string>();
  private pending: MemoryMessage[] = [];
  private queue: Promise<void> = Promise.resolve();

  constructor(options: MemloomBlockOptions) {
    const settings = parseOptions(optionsSchema, options, 'MemloomMemoryBlock');
    const scope = requireScope(settings.scope, 'MemloomMemoryBlock');
    super({ id: settings.id, priority: settings.priority, isLongTerm: true });
    this.settings = settings;
    this.memory = settings.memory;
    this.scope = scope;
    this.logger = settings.logger ?? consoleLogger;
    this.pipeline =
      settings.pipeline ??
      createMemoryPipeline({
        memory: settings.memory,
        ...(settings.llm === null ? { languageModel: null } : settings.llm ? { languageModel: fromLlamaIndexLLM(settings.llm) } : {}),
        logger: this.logger,
      });
  }

  /** Memories relevant to the latest messages, as one memory message (none when nothing relevant is found or the store fails). */
  async get(messages: MemoryMessage[] = []): Promise<MemoryMessage[]> {
    assertMessages(messages, 'MemloomMemoryBlock.get');
    this.recoverSkipped(messages);
    const query = this.queryFrom(messages);
    if (query === '') return [];
    let records: MemoryRecord[];
    try {
      const policy = await this.pipeline.policy(this.scope);
      const results = await this.memory.search(query, {
        scope: this.scope,
        limit: this.settings.limit ?? policy.retrieve_limit,
        minScore: this.settings.minScore,
        filter: this.settings.filter,
      });
      records = results.map((result) => result.memory);
      const found = new Set(records.map((record) => record.id));
      const notes = await recentNotes(this.memory, { scope: this.scope, days: policy.recent_days, filter: this.settings.filter });
      records.push(...notes.filter((note) => !found.has(note.id)));
    } catch (error) {
      this.logger.warn?.(`memory block ${this.id}: search failed, answering without long-term memories: ${errorMessage(error)}`, { error });
      return [];
    }
    const content = this.renderWithin(records);
    return content === '' ? [] : [{ id: `${this.id}-memories`, role: this.settings.messageRole, content }];
  }

  /**
   * Record messages flushed from short-term memory. Bad input throws
   * INVALID_INPUT before anything is written; a failing store is logged and
   * its messages are retried with the next flush.
   */
  async put(messages: MemoryMessage[]): Promise<void> {
    assertMessages(messages, 'MemloomMemoryBlock.put');
    for (const message of messages) if (typeof message.id === 'string') remember(this.offered, message.id);
    // record() reports its own failures; the catch only keeps one surprise from stalling every later flush.
    const run = this.queue.catch(() => undefined).then(() => this.record(messages));
    this.queue = run;
    return run;
  }

  /**
   * Record what LlamaIndex has not flushed yet (the short-term messages of a
   * session that ends before they overflow, and any it skipped). Call it when
   * a session ends. Reads the Memory's public snapshot; messages this block
   * has already been given are not recorded again.
   */
  async flush(chatMemory: { snapshot(): string }): Promise<void> {
    if (typeof (chatMemory as { snapshot?: unknown } | undefined)?.snapshot !== 'function') {
      throw new MemloomError({ code: 'INVALID_INPUT', backend: 'llamaindex', message: 'flush needs a LlamaIndex Memory (from createMemory)' });
    }
    let snapshot: { messages?: unknown; memoryCursor?: unknown };
    try {
      snapshot = JSON.parse(chatMemory.snapshot()) as typeof snapshot;
    } catch (error) {
      throw new MemloomError({ code: 'INVALID_INPUT', backend: 'llamaindex', message: `flush could not read the memory's snapshot: ${errorMessage(error)}`, cause: error });
    }
    const messages = (Array.isArray(snapshot.messages) ? snapshot.messages : []) as MemoryMessage[];
    const cursor = typeof snapshot.memoryCursor === 'number' ? snapshot.memoryCursor : 0;
    // From the first message this block was given (earlier ones predate it, e.g. a restored snapshot), else from the cursor.
    const first = messages.findIndex((message) => this.offered.has(message.id));
    const start = first >= 0 ? Math.min(first, cursor) : cursor;
    await this.put(messages.slice(start).filter((message) => !this.offered.has(message.id)));
  }

  /** Resolves when every `put` so far has finished (agent workflows add messages without waiting for the flush). */
  whenIdle(): Promise<void> {
    return this.queue;
  }

  /** Messages waiting for a retry because the store failed. */
  get pendingCount(): number {
    return this.pending.length;
  }

  private async record(messages: MemoryMessage[]): Promise<void> {
    // Deduplicate here, inside the queue: LlamaIndex may flush overlapping batches when adds are not awaited.
    const batch: MemoryMessage[] = [];
    const seen = new Set<string>();
    // Messages this block tried before, when the store failed part-way: a memory may already name one of
    // them in its sources, yet the rest of its turn is still to record.
    const retrying = new Set(this.pending.flatMap((message) => (typeof message.id === 'string' ? [message.id] : [])));
    for (const message of [...this.pending, ...messages]) {
      const id = typeof message.id === 'string' ? message.id : undefined;
      if (id !== undefined && (this.recorded.has(id) || seen.has(id))) continue;
      if (id !== undefined) seen.add(id);
      batch.push(message);
    }
    this.pending = [];
    if (batch.length === 0) return;
    try {
      const limit = this.settings.limit ?? (await this.pipeline.policy(this.scope)).retrieve_limit;
      const outcome = await recordMessages(this.memory, batch, {
        scope: this.scope,
        pipeline: this.pipeline,
        retrieval: { limit, minScore: this.settings.minScore, filter: this.settings.filter },
        retrying,
      });
      for (const id of outcome.done) remember(this.recorded, id);
      for (const skipped of outcome.skipped) {
        // A user message with no text (an image, say) is ordinary; anything else was lost and deserves a warning.
        const log = skipped.reason === 'no text' || skipped.reason === ALREADY_RECORDED ? this.logger.debug : this.logger.warn;
        log?.call(this.logger, `memory block ${this.id}: flushed message not recorded: ${skipped.reason}`, { id: skipped.id });
      }
      if (outcome.remaining.length > 0) this.keepForRetry(outcome.remaining, outcome.error);
    } catch (error) {
      this.keepForRetry(batch, error);
    }
  }

  private keepForRetry(messages: MemoryMessage[], error: unknown): void {
    const dropped = Math.max(0, messages.length - MAX_PENDING);
    this.pending = messages.slice(dropped);
    this.logger.warn?.(
      `memory block ${this.id}: could not record ${messages.length} flushed message(s), will retry with the next flush: ${errorMessage(error)}` +
        (dropped > 0 ? ` (dropped the ${dropped} oldest)` : ''),
      { error },
    );
  }

  /**
   * LlamaIndex 0.6.22 adds agent-workflow messages without awaiting, so two
   * flushes can overlap; its cursor then moves past messages that were never
   * handed to any block (they also drop out of its short-term window). Every
   * message between the first and the last one this block was given has been
   * passed by the cursor, so one it was never given was skipped: record it.
   */
  private recoverSkipped(messages: MemoryMessage[]): void {
    let last = -1;
    for (let index = messages.length - 1; index >= 0; index--) {
      if (this.offered.has(messages[index]!.id)) {
        last = index;
        break;
      }
    }
    if (last < 0) return;
    const first = messages.findIndex((message) => this.offered.has(message.id));
    const skipped = messages.slice(first, last).filter((message) => typeof message.id === 'string' && !this.offered.has(message.id));
    if (skipped.length === 0) return;
    this.logger.debug?.(`memory block ${this.id}: recording ${skipped.length} message(s) LlamaIndex skipped while flushing`, {
      ids: skipped.map((message) => message.id),
    });
    this.put(skipped).catch((error: unknown) => this.logger.warn?.(`memory block ${this.id}: could not queue skipped messages: ${errorMessage(error)}`));
  }

  /**
   * The latest user and assistant messages with text, as one query no longer
   * than memloom accepts. A tool call is not a reply: an agent handing off
   * saves one (often with no text) just before the next agent asks.
   */
  private queryFrom(messages: MemoryMessage[]): string {
    const turns = messages.filter((message) => (isUserTurn(message) || (message.role === 'assistant' && !isToolCall(message))) && messageText(message) !== '');
    const text = turns
      .slice(-this.settings.queryWindow)
      .map((message) => messageText(message))
      .join('\n');
    const max = this.memory.config.limits.maxContentLength;
    return lastCharacters(text, max).trim();
  }

  /** The `<memories>` block, dropping the oldest notes, then the lowest-ranked memories, until it fits the token limit. */
  private renderWithin(records: MemoryRecord[]): string {
    const freshness = this.memory.config.freshness === false ? undefined : this.memory.config.freshness;
    const nowMs = this.memory.clock.now();
    const render = (count: number) => renderContextBlock(records.slice(0, count), { nowMs, freshness, ...(this.settings.header ? { header: this.settings.header } : {}) });
    // The most records that fit (a binary search: each record adds a line), as the LangChain prompt does; '' when none does.
    return render(longestFitting(records.length, (count) => countTokens(render(count)) <= this.settings.tokenLimit));
  }
}

/** Create a {@link MemloomMemoryBlock}. */
export function memloomBlock(options: MemloomBlockOptions): MemloomMemoryBlock {
  return new MemloomMemoryBlock(options);
}

/** Add to a bounded set of ids, forgetting the oldest past MAX_REMEMBERED_IDS. */
function remember(ids: Set<string>, id: string): void {
  ids.delete(id);
  ids.add(id);
  if (ids.size > MAX_REMEMBERED_IDS) {
    const oldest = ids.values().next().value;
    if (oldest !== undefined) ids.delete(oldest);
  }
}
