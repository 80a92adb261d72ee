import type { JSONValue } from '@llamaindex/core/global';
import { BaseMemoryBlock, type MemoryMessage } from '@llamaindex/core/memory';
import { FunctionTool } from '@llamaindex/core/tools';
import {
  MemloomError,
  WorkingMemoryTracker,
  workingMemoryConfigSchema,
  type Logger,
  type WorkingMemoryCheck,
  type WorkingMemoryConfigInput,
} from '@memloom/core';
import { z } from 'zod';
import { assertMessages, countTokens, escapeTags, isUserTurn, MESSAGE_ROLES, messageText } from './messages.js';
import { blockIdSchema, consoleLogger, errorMessage, loggerSchema, parseOptions, prioritySchema, tokenLimitSchema } from './options.js';

export interface WorkingMemoryBlockOptions extends WorkingMemoryConfigInput {
  /** @default 'memloom-working-memory' */
  id?: string;
  /** 0 keeps the overview in every prompt, ahead of the conversation. @default 0 */
  priority?: number;
  /** The overview to start from (e.g. the one saved by `onUpdate` last session). @default '' */
  overview?: string;
  /** Largest overview accepted, in UTF-8 bytes. @default 16384 */
  maxOverviewBytes?: number;
  /**
   * Largest overview accepted, in tokens (LlamaIndex's tokenizer). LlamaIndex
   * leaves a block out of the prompt when it does not fit the prompt's token
   * limit (three quarters of the LLM's context window), so lower this for
   * models with a small window. @default 4096
   */
  maxOverviewTokens?: number;
  /** Tokens the agent's context may hold; context use in the reminder is measured against it. @default 30000 (LlamaIndex Memory's default tokenLimit) */
  contextTokenLimit?: number;
  /** Name of the tool from `asTool()`. @default 'update_working_memory' */
  toolName?: string;
  /** Text shown above the overview. @default says what the overview is and which tool rewrites it */
  instructions?: string;
  /** Role of the returned message. @default 'memory' */
  messageRole?: (typeof MESSAGE_ROLES)[number];
  /** Called with every new overview before it takes effect (persist it here); if it throws, the update is refused. */
  onUpdate?: (overview: string) => void | Promise<void>;
  /** @default console.warn */
  logger?: Logger;
}

/** The options passed on to core's WorkingMemoryTracker. */
const TRACKER_KEYS = workingMemoryConfigSchema.keyof().options;

const optionsSchema = z
  .object({
    id: blockIdSchema.default('memloom-working-memory'),
    priority: prioritySchema.default(0),
    overview: z.string().default(''),
    maxOverviewBytes: z.number().int().positive().default(16_384),
    maxOverviewTokens: tokenLimitSchema.default(4096),
    contextTokenLimit: tokenLimitSchema.default(30_000),
    toolName: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'letters, digits, _ and - only (at most 64)').default('update_working_memory'),
    instructions: z.string().min(1).optional(),
    messageRole: z.enum(MESSAGE_ROLES).default('memory'),
    onUpdate: z.custom<(overview: string) => void | Promise<void>>((value) => typeof value === 'function', { message: 'must be a function' }).optional(),
    logger: loggerSchema.optional(),
    // The tracker's own fields, checked by core's schema here so a bad one is named as this block's option.
    ...workingMemoryConfigSchema.partial().shape,
  })
  // A misspelt option (maxRound) is refused, not silently ignored.
  .strict();

/**
 * Seed 003's working memory as a LlamaIndex memory block. It holds the
 * agent's overview (current task, decisions, open questions) and shows it in
 * every prompt. Each new user message starts a round; when the overview has
 * not been rewritten for too many rounds (core's WorkingMemoryTracker:
 * more than `maxRounds`, or more than `minRounds` once context use passes
 * `tokenThresholdPercent`), the update reminder is appended until it is.
 * The agent rewrites it with the tool from `asTool()`; code can call
 * `updateOverview`.
 */
export class WorkingMemoryBlock extends BaseMemoryBlock {
  readonly tracker: WorkingMemoryTracker;
  private readonly settings: z.output<typeof optionsSchema>;
  private readonly logger: Logger;
  private currentOverview: string;
  private lastCheck: WorkingMemoryCheck | undefined;

  constructor(options: WorkingMemoryBlockOptions = {}) {
    const settings = parseOptions(optionsSchema, options, 'WorkingMemoryBlock');
    const trackerConfig: WorkingMemoryConfigInput = {
      overviewPath: `the ${settings.toolName} tool`,
      detailPath: "a short 'Done' section of the overview",
    };
    for (const key of TRACKER_KEYS) {
      if (options[key] !== undefined) Object.assign(trackerConfig, { [key]: options[key] });
    }
    // Its fields were checked above; what only the tracker checks (minRounds against maxRounds) is refused as this package's.
    const tracker = new WorkingMemoryTracker(trackerConfig, 'llamaindex');
    super({ id: settings.id, priority: settings.priority, isLongTerm: false });
    this.settings = settings;
    this.tracker = tracker;
    this.logger = settings.logger ?? consoleLogger;
    // An overview saved before (onUpdate) is taken back even past maxOverviewTokens, with a warning: a
    // limit added or lowered later must not stop the app that restores it. Updates keep to the limit.
    this.currentOverview = validOverview(settings.overview, { maxOverviewBytes: settings.maxOverviewBytes });
    const tokens = countTokens(this.currentOverview);
    if (tokens > settings.maxOverviewTokens) {
      this.logger.warn?.(
        `working memory ${this.id}: the overview given is ${tokens} tokens, past maxOverviewTokens (${settings.maxOverviewTokens}); LlamaIndex may leave it out of a small window until the agent rewrites it shorter`,
      );
    }
  }

  /** The current overview. */
  get overview(): string {
    return this.currentOverview;
  }

  /** Rounds since the overview was last written. */
  get roundsSinceUpdate(): number {
    return this.tracker.roundsSinceUpdate;
  }

  /** The overview, with the update reminder when one is due. */
  async get(messages: MemoryMessage[] = []): Promise<MemoryMessage[]> {
    assertMessages(messages, 'WorkingMemoryBlock.get');
    const round = roundOf(messages);
    // LlamaIndex asks again at every agent step; only a new user message is a new round (the tracker's rule).
    if (round !== undefined) {
      this.lastCheck = this.tracker.checkRound(
        {
          tokensUsed: contextTokens(messages, this.settings.contextTokenLimit),
          tokensMax: this.settings.contextTokenLimit,
          messageCount: messages.length,
          overviewBytes: byteLength(this.currentOverview),
        },
        round,
      );
    }
    const instructions =
      this.settings.instructions ??
      `Your working memory: an overview of the current task, decisions made and open questions. It persists between turns; rewrite it with the ${this.settings.toolName} tool whenever it changes.`;
    const body = this.currentOverview.trim() === '' ? '(empty: no overview written yet)' : escapeTags(this.currentOverview);
    const reminder = this.lastCheck?.remind ? `\n\n${this.lastCheck.reminder}` : '';
    return [{ id: `${this.id}-overview`, role: this.settings.messageRole, content: `<working-memory>\n${instructions}\n\n${body}\n</working-memory>${reminder}` }];
  }

  /** Working memory is not fed from flushed messages. */
  async put(_messages: MemoryMessage[]): Promise<void> {}

  /**
   * Replace the overview and start counting rounds again. A non-string or an
   * overview over `maxOverviewBytes` or `maxOverviewTokens` throws (INVALID_INPUT / CONTENT_TOO_LONG)
   * and changes nothing; so does a failing `onUpdate` (STORE_ERROR).
   */
  async updateOverview(overview: string): Promise<void> {
    const next = validOverview(overview, this.settings);
    if (this.settings.onUpdate) {
      try {
        await this.settings.onUpdate(next);
      } catch (error) {
        throw new MemloomError({ code: 'STORE_ERROR', backend: 'llamaindex', message: `working memory not updated: onUpdate failed: ${errorMessage(error)}`, cause: error });
      }
    }
    this.currentOverview = next;
    this.tracker.markUpdated();
    this.lastCheck = undefined;
  }

  /**
   * A LlamaIndex tool the agent calls to rewrite its overview. A refused
   * update comes back to the model as text it can act on, not as a thrown
   * error that would end the agent's run.
   */
  asTool(): FunctionTool<{ overview: string }, Promise<JSONValue>> {
    return new FunctionTool<{ overview: string }, Promise<JSONValue>>(
      async (input) => {
        const overview = (input as { overview?: unknown } | undefined)?.overview;
        try {
          await this.updateOverview(overview as string);
          return `Working memory updated (${byteLength(this.currentOverview)} bytes).`;
        } catch (error) {
          this.logger.warn?.(`working memory ${this.id}: update refused: ${errorMessage(error)}`);
          return `Working memory NOT updated: ${errorMessage(error)}`;
        }
      },
      {
        name: this.settings.toolName,
        description:
          'Rewrite your working-memory overview (replaces it entirely): the current task and its status, decisions made, open questions, and a short list of finished work. Keep it concise.',
        parameters: {
          type: 'object',
          properties: { overview: { type: 'string', description: 'The complete new overview, in Markdown.' } },
          required: ['overview'],
        } as never,
      },
    );
  }
}

/** Create a {@link WorkingMemoryBlock}. */
export function workingMemoryBlock(options: WorkingMemoryBlockOptions = {}): WorkingMemoryBlock {
  return new WorkingMemoryBlock(options);
}

/** The overview, checked: a string within `maxOverviewBytes` and, when given, `maxOverviewTokens`. */
function validOverview(overview: unknown, limits: { maxOverviewBytes: number; maxOverviewTokens?: number }): string {
  const { maxOverviewBytes: maxBytes, maxOverviewTokens: maxTokens } = limits;
  if (typeof overview !== 'string') {
    throw new MemloomError({ code: 'INVALID_INPUT', backend: 'llamaindex', message: `the working-memory overview must be a string, got ${overview === null ? 'null' : typeof overview}` });
  }
  const bytes = byteLength(overview);
  if (bytes > maxBytes) {
    throw new MemloomError({
      code: 'CONTENT_TOO_LONG',
      backend: 'llamaindex',
      message: `the working-memory overview is ${bytes} bytes; the limit is ${maxBytes} (maxOverviewBytes)`,
      details: { bytes, maxBytes },
    });
  }
  if (maxTokens === undefined) return overview;
  const tokens = countTokens(overview);
  if (tokens > maxTokens) {
    throw new MemloomError({
      code: 'CONTENT_TOO_LONG',
      backend: 'llamaindex',
      message: `the working-memory overview is ${tokens} tokens; the limit is ${maxTokens} (maxOverviewTokens): shorten it`,
      details: { tokens, maxTokens },
    });
  }
  return overview;
}

/**
 * Which round the messages are at: how many user messages they hold, and the
 * latest one's text (undefined before the first). Not the message's id: a
 * transient message (`getLLM(llm, [message])`) gets a new id on every call,
 * though it is the same question.
 */
function roundOf(messages: readonly MemoryMessage[]): string | undefined {
  let count = 0;
  let latest: MemoryMessage | undefined;
  for (const message of messages) {
    if (!isUserTurn(message)) continue;
    count++;
    latest = message;
  }
  return latest ? `${count}:${messageText(latest)}` : undefined;
}

/**
 * Tokens of the newest messages that fit in `limit`: what the model's context
 * can hold of the conversation. LlamaIndex hands a block every message it
 * keeps, the ones its short-term window no longer shows included, so their
 * sum would pass the context's size.
 */
function contextTokens(messages: readonly MemoryMessage[], limit: number): number {
  let total = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    const tokens = countTokens(messageText(messages[index] as MemoryMessage));
    // The newest message alone passing the limit fills the context.
    if (total + tokens > limit) return total === 0 ? limit : total;
    total += tokens;
  }
  return total;
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}
