import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { SUMMARY_MESSAGE_ID_PREFIX, type ConversationMessage, type SessionSummaryResult } from '@memloom/core';
import { isSummaryMessage, messageText, SUMMARY_SOURCE, transcriptLine } from './messages.js';

/** Longest message id the pipeline takes; longer ids are left out (they only serve provenance). */
const MAX_ID_LENGTH = 512;

/**
 * LangChain messages as the pipeline's conversation: users' messages, the
 * assistant's (with the tools it called), tool results, and system text (a
 * summary standing for older messages included).
 */
export function toConversation(messages: readonly BaseMessage[]): ConversationMessage[] {
  return messages.map((message) => {
    const id = typeof message.id === 'string' && message.id !== '' && message.id.length <= MAX_ID_LENGTH ? { id: message.id } : {};
    if (isSummaryMessage(message) || SystemMessage.isInstance(message)) return { role: 'system', content: messageText(message), ...id };
    if (HumanMessage.isInstance(message)) return { role: 'user', content: messageText(message), ...id };
    if (ToolMessage.isInstance(message)) return { role: 'tool', content: messageText(message), ...id };
    if (AIMessage.isInstance(message)) return { role: 'assistant', content: transcriptLine(message).replace(/^assistant: /, ''), ...id };
    return { role: 'user', content: messageText(message), ...id };
  });
}

/**
 * The conversation after a session summary, back in LangChain messages: the
 * summary (as a marked human message, since chat APIs take system text only
 * first) followed by the original messages that were kept.
 */
export function fromSessionSummary(result: SessionSummaryResult, original: readonly BaseMessage[]): BaseMessage[] {
  const kept = original.slice(original.length - result.plan.kept.length);
  return result.summaryMessage ? [summaryMessage(result.summaryMessage.content, result.summaryMessage.id), ...kept] : [...kept];
}

/** The message that stands in a conversation for the messages a summary replaced. */
export function summaryMessage(content: string, id?: string): HumanMessage {
  return new HumanMessage({ content, ...(id ? { id } : {}), additional_kwargs: { lc_source: SUMMARY_SOURCE } });
}

/** Ids of the episodes whose summaries the conversation holds (from the summary messages' ids). */
export function summarizedEpisodeIds(messages: readonly BaseMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (isSummaryMessage(message) && typeof message.id === 'string' && message.id.startsWith(SUMMARY_MESSAGE_ID_PREFIX)) {
      ids.add(message.id.slice(SUMMARY_MESSAGE_ID_PREFIX.length));
    }
  }
  return ids;
}
