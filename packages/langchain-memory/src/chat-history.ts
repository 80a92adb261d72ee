import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import {
  HumanMessage,
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  SystemMessage,
  type BaseMessage,
  type StoredMessage,
} from '@langchain/core/messages';
import { MemloomError, resolvePolicy, scopeKey, validateScope, type Memory, type MemoryRecord, type Policy, type PolicyOverrides, type Scope } from '@memloom/core';
import { messageText, safeCutoff, transcriptLine } from './messages.js';
import { recordSummary, summarizeMessages, summaryMessage } from './summary.js';
import { approximateTokens, type TokenCounter } from './tokens.js';

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
  /** Seed 001's policy (`session_summary_message_threshold`, `session_summary_token_percent`, `session_summary_keep_count`). */
  policy?: PolicyOverrides;
  /** Summarize older messages when the history passes the policy's thresholds. @default true */
  summarize?: boolean;
  /** The model's context window, for `session_summary_token_percent`. @default none: only the message count triggers */
  contextWindowTokens?: number;
  /** How tokens are counted. @default about four characters (or one CJK character) per token */
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
 */
export class MemloomChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['memloom', 'chat_history'];
  readonly memory: Memory;
  readonly sessionId: string;
  readonly scope: Scope;
  readonly policy: Policy;
  private readonly summarize: boolean;
  private readonly contextWindowTokens: number | undefined;
  private readonly countTokens: TokenCounter;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: MemloomChatMessageHistoryOptions) {
    super();
    if (!options?.memory || typeof options.memory.add !== 'function') {
      throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'chat-history', message: 'MemloomChatMessageHistory needs { memory, sessionId }' });
    }
    this.memory = options.memory;
    this.sessionId = options.sessionId;
    this.scope = validateScope({ ...(options.scope ?? {}), sessionId: options.sessionId }, options.memory.config.limits.maxScopeLength, 'chat-history');
    this.policy = resolvePolicy([{ source: 'MemloomChatMessageHistory options.policy', values: options.policy }]);
    this.summarize = options.summarize ?? true;
    this.contextWindowTokens = options.contextWindowTokens;
    this.countTokens = options.countTokens ?? approximateTokens;
  }

  /** The summary of older messages (when there is one), then the messages in the order they were added. */
  async getMessages(): Promise<BaseMessage[]> {
    await this.queue.catch(() => undefined);
    const [summary, records] = await Promise.all([this.summaryRecord(), this.messageRecords()]);
    const messages = records.map((record) => toMessage(record));
    return summary ? [summaryMessage(summary.content, `memloom-summary-${summary.id}`), ...messages] : messages;
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
      for (const record of records) await this.memory.delete(record.id, { scope: this.scope });
    });
  }

  private get sessionKey(): string {
    return scopeKey(this.scope);
  }

  private async summarizeIfDue(): Promise<void> {
    const records = await this.messageRecords();
    const messages = records.map((record) => toMessage(record));
    const window = this.contextWindowTokens;
    const over =
      messages.length > this.policy.session_summary_message_threshold ||
      (window !== undefined && (await this.countTokens(messages)) > (window * this.policy.session_summary_token_percent) / 100);
    if (!over) return;
    const cutoff = safeCutoff(messages, this.policy.session_summary_keep_count);
    if (cutoff <= 0) return;
    const current = await this.summaryRecord();
    const folded = [...(current ? [summaryMessage(current.content)] : []), ...messages.slice(0, cutoff)];
    const summary = await summarizeMessages(this.memory, folded);
    if (current) {
      await this.memory.update(current.id, { content: summary }, { scope: this.scope, refreshTimestamp: true, reason: `folded ${cutoff} more messages into the summary` });
    } else {
      await this.memory.add(summary, {
        scope: this.scope,
        category: 'system',
        source: 'background_ai',
        tags: [CHAT_SUMMARY_TAG],
        metadata: { chatSession: this.sessionKey },
        merge: false,
      });
    }
    await recordSummary(this.memory, summary, this.scope, messages.slice(0, cutoff));
    for (const record of records.slice(0, cutoff)) await this.memory.delete(record.id, { scope: this.scope });
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

  /** Writes of one history object run one at a time, so sequence numbers never collide. */
  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.catch(() => undefined).then(work);
    this.queue = next;
    return next;
  }
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
