import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import {
  HumanMessage,
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  SystemMessage,
  type BaseMessage,
  type StoredMessage,
} from '@langchain/core/messages';
import {
  createMemoryPipeline,
  MemloomError,
  SUMMARY_MESSAGE_ID_PREFIX,
  scopeKey,
  validateScope,
  type ConversationMessage,
  type LanguageModel,
  type Memory,
  type MemoryPipeline,
  type MemoryRecord,
  type PolicyOverrides,
  type Scope,
} from '@memloom/core';
import { toLanguageModel, type ChatModelLike } from './adapters.js';
import { summaryMessage, toConversation } from './conversation.js';
import { messageText, transcriptLine } from './messages.js';
import { unlessGone } from './errors.js';
import { runInSession } from './session-lock.js';
import type { TokenCounter } from './tokens.js';

/** Tag on the memory that holds one message of a chat history. */
export const CHAT_MESSAGE_TAG = 'chat-message';
/** Tag on the memory that holds the rolling summary of a chat history's older messages. */
export const CHAT_SUMMARY_TAG = 'chat-summary';

export interface MemloomChatMessageHistoryOptions {
  memory: Memory;
  /** The conversation. Becomes the scope's `sessionId`. */
  sessionId: string;
  /** Whose conversation (`userId`, `agentId`). */
  scope?: Omit<Scope, 'sessionId'>;
  /** Seed 001's policy (`session_summary_message_threshold`, `session_summary_token_percent`, `session_summary_keep_count`), over the memory's own (`memory.config.policy`). */
  policy?: PolicyOverrides;
  /**
   * The chat model (or memloom language model) that writes summaries; `null` for the deterministic summary.
   * @default the memory's `languageModel`, else the deterministic summary
   */
  model?: ChatModelLike | LanguageModel | null;
  /** A pipeline made with core's `createMemoryPipeline`, instead of `model` and `policy`. */
  pipeline?: MemoryPipeline;
  /** Summarize older messages when the history passes the policy's thresholds. @default true */
  summarize?: boolean;
  /** The model's context window, for `session_summary_token_percent`. @default none: only the message count triggers */
  contextWindowTokens?: number;
  /** Tokens of one message's text. @default core's `estimateTokens` */
  countTokens?: TokenCounter;
}

/**
 * A LangChain chat message history kept in memloom, so a conversation
 * survives a new process whenever the store is persistent (SQLite, Markdown,
 * Qdrant).
 *
 * Scheme: each message is one `system`-category memory tagged `chat-message`
 * in the scope `{ ...scope, sessionId }`, holding the message itself
 * (LangChain's stored form) in its metadata with a sequence number; `system`
 * records are never decayed, compressed or merged, and the agent middleware
 * does not inject them. When the history passes seed 001's threshold (more
 * than 20 messages, or 75% of `contextWindowTokens`), all but the last 4 are
 * folded into a rolling summary (a `chat-summary` record, returned first by
 * `getMessages`) and kept in long-term memory as an `episode` (seed 002), then
 * deleted.
 *
 * Reads and writes of one session run one at a time across every history
 * object over the same store in this process (`RunnableWithMessageHistory`
 * makes a new object per call), so concurrent writes keep their order and
 * never fold the same messages twice. Writers in separate processes are not
 * serialized.
 */
export class MemloomChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['memloom', 'chat_history'];
  readonly memory: Memory;
  readonly sessionId: string;
  readonly scope: Scope;
  readonly pipeline: MemoryPipeline;
  private readonly summarize: boolean;
  private readonly contextWindowTokens: number | undefined;
  private readonly countTokens: TokenCounter | undefined;

  constructor(options: MemloomChatMessageHistoryOptions) {
    super();
    if (!options?.memory || typeof options.memory.add !== 'function') {
      throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'chat-history', message: 'MemloomChatMessageHistory needs { memory, sessionId }' });
    }
    this.memory = options.memory;
    this.sessionId = options.sessionId;
    this.scope = validateScope({ ...(options.scope ?? {}), sessionId: options.sessionId }, options.memory.config.limits.maxScopeLength, 'chat-history');
    this.pipeline = pipelineFor(options);
    this.summarize = options.summarize ?? true;
    this.contextWindowTokens = options.contextWindowTokens;
    this.countTokens = options.countTokens;
  }

  /** The summary of older messages (when there is one), then the messages in the order they were added. */
  async getMessages(): Promise<BaseMessage[]> {
    // In the session's queue, so a read never sees a summary whose replaced messages are not deleted yet.
    return this.serialized(async () => {
      const [summary, records] = await Promise.all([this.summaryRecord(), this.messageRecords()]);
      const messages = records.map((record) => toMessage(record));
      if (!summary) return messages;
      const episodeId = summary.metadata.episodeId;
      return [summaryMessage(summary.content, typeof episodeId === 'string' ? `${SUMMARY_MESSAGE_ID_PREFIX}${episodeId}` : undefined), ...messages];
    });
  }

  async addMessage(message: BaseMessage): Promise<void> {
    return this.addMessages([message]);
  }

  override async addMessages(messages: BaseMessage[]): Promise<void> {
    return this.serialized(async () => {
      const existing = await this.messageRecords();
      let seq = existing.reduce((highest, record) => Math.max(highest, sequenceOf(record)), 0);
      for (const message of messages) {
        const [stored] = mapChatMessagesToStoredMessages([message]) as StoredMessage[];
        seq += 1;
        await this.memory.add(contentOf(message).slice(0, this.memory.config.limits.maxContentLength), {
          scope: this.scope,
          category: 'system',
          source: HumanMessage.isInstance(message) ? 'user' : message.type === 'system' ? 'system' : 'background_ai',
          tags: [CHAT_MESSAGE_TAG],
          metadata: { chatSession: this.sessionKey, chatSeq: seq, chatMessage: JSON.parse(JSON.stringify(stored)) },
          merge: false,
          ...(message.id ? { sources: [message.id] } : {}),
        });
      }
      if (this.summarize) await this.summarizeIfDue();
    });
  }

  /** Forget this conversation's messages and summary. Episodes already made from it stay in long-term memory. */
  override async clear(): Promise<void> {
    return this.serialized(async () => {
      const records = [...(await this.messageRecords()), ...(await this.summaryRecords())];
      for (const record of records) await this.remove(record);
    });
  }

  private get sessionKey(): string {
    return scopeKey(this.scope);
  }

  /**
   * Seed 001 through core's pipeline: past the thresholds, the summary so far and the older
   * messages become the new summary (and an episode); the messages it replaced are deleted.
   */
  private async summarizeIfDue(): Promise<void> {
    const records = await this.messageRecords();
    const current = await this.summaryRecord();
    const conversation: ConversationMessage[] = [
      ...(current ? [{ role: 'system' as const, content: current.content }] : []),
      ...toConversation(records.map((record) => toMessage(record))),
    ];
    const result = await this.pipeline.summarizeSession(conversation, {
      scope: this.scope,
      ...(this.contextWindowTokens !== undefined ? { contextWindowTokens: this.contextWindowTokens } : {}),
      ...(this.countTokens ? { countTokens: this.countTokens } : {}),
    });
    if (result.action === 'none' || !result.summaryMessage) return;
    const summary = result.summaryMessage.content;
    if (current) {
      await this.memory.update(current.id, { content: summary, metadata: { ...current.metadata, ...(result.episode ? { episodeId: result.episode.memory.id } : {}) } }, {
        scope: this.scope,
        refreshTimestamp: true,
        reason: `folded ${result.summarizedCount} more messages into the summary`,
      });
    } else {
      await this.memory.add(summary, {
        scope: this.scope,
        category: 'system',
        source: 'background_ai',
        tags: [CHAT_SUMMARY_TAG],
        metadata: { chatSession: this.sessionKey, ...(result.episode ? { episodeId: result.episode.memory.id } : {}) },
        merge: false,
      });
    }
    const replaced = result.summarizedCount - (current ? 1 : 0);
    for (const record of records.slice(0, replaced)) await this.remove(record);
  }

  /** Deletes one record by id, unless another writer (e.g. another process) already has. */
  private remove(record: MemoryRecord): Promise<void> {
    return unlessGone(() => this.memory.delete(record.id, { scope: this.scope }));
  }

  private async messageRecords(): Promise<MemoryRecord[]> {
    const records = await this.memory.list({
      scope: this.scope,
      filter: { tags: [CHAT_MESSAGE_TAG], metadata: { chatSession: this.sessionKey } },
    });
    return records.sort((a, b) => sequenceOf(a) - sequenceOf(b) || (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  }

  private summaryRecords(): Promise<MemoryRecord[]> {
    return this.memory.list({
      scope: this.scope,
      filter: { tags: [CHAT_SUMMARY_TAG], metadata: { chatSession: this.sessionKey } },
      orderBy: 'updatedAt',
      direction: 'desc',
    });
  }

  private async summaryRecord(): Promise<MemoryRecord | undefined> {
    return (await this.summaryRecords())[0];
  }

  /**
   * Work on this session runs one task at a time across every history object over the same
   * store, so sequence numbers never collide and a summary is folded once.
   */
  private serialized<T>(work: () => Promise<T>): Promise<T> {
    return runInSession(this.memory.store, this.sessionKey, work);
  }
}

function pipelineFor(options: MemloomChatMessageHistoryOptions): MemoryPipeline {
  if (options.pipeline) {
    if (options.model !== undefined || options.policy !== undefined) {
      throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'chat-history', message: 'give either a pipeline or model / policy: a pipeline brings its own' });
    }
    if (options.pipeline.memory !== options.memory) {
      throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'chat-history', message: 'the pipeline must be made over the same memory as the history' });
    }
    return options.pipeline;
  }
  const { model } = options;
  return createMemoryPipeline({
    memory: options.memory,
    ...(model === null ? { languageModel: null } : model ? { languageModel: toLanguageModel(model) } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
  });
}

function toMessage(record: MemoryRecord): BaseMessage {
  const stored = record.metadata.chatMessage as StoredMessage | undefined;
  if (!stored || typeof stored !== 'object') return new SystemMessage(record.content);
  const [message] = mapStoredMessagesToChatMessages([stored]);
  return message ?? new SystemMessage(record.content);
}

function sequenceOf(record: MemoryRecord): number {
  const seq = record.metadata.chatSeq;
  return typeof seq === 'number' ? seq : 0;
}

/** The searchable text of a message: its transcript line, never empty. */
function contentOf(message: BaseMessage): string {
  const line = transcriptLine(message);
  return messageText(message).trim() === '' && !line.includes('[called') ? `${message.type}: (no text)` : line;
}
