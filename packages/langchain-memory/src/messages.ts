import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';

/** `additional_kwargs.lc_source` of the message that stands for a summarized part of the conversation. */
export const SUMMARY_SOURCE = 'memloom_summary';

/** The text of a message: string content, or the text blocks of structured content. */
export function messageText(message: BaseMessage): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => {
      if (typeof block === 'string') return block;
      if (block && typeof block === 'object' && 'text' in block && typeof block.text === 'string') return block.text;
      return '';
    })
    .filter(Boolean)
    .join('\n');
}

/** True for the message memloom puts in place of summarized messages. */
export function isSummaryMessage(message: BaseMessage): boolean {
  return message.additional_kwargs?.lc_source === SUMMARY_SOURCE;
}

/** A human message written by the user (not a summary standing in for earlier messages). */
export function isUserMessage(message: BaseMessage): boolean {
  return HumanMessage.isInstance(message) && !isSummaryMessage(message);
}

/**
 * The user's latest input: the run of user messages that ends at the last
 * one (usually a single message).
 */
export function latestUserInput(messages: readonly BaseMessage[]): BaseMessage[] {
  let end = -1;
  for (let index = messages.length - 1; index >= 0; index--) {
    if (isUserMessage(messages[index] as BaseMessage)) {
      end = index;
      break;
    }
  }
  if (end < 0) return [];
  let start = end;
  while (start > 0 && isUserMessage(messages[start - 1] as BaseMessage)) start--;
  return messages.slice(start, end + 1);
}

/** A short transcript line per message, for summaries. */
export function transcriptLine(message: BaseMessage): string {
  const text = messageText(message).replace(/\s+/g, ' ').trim();
  if (isSummaryMessage(message)) return text;
  if (HumanMessage.isInstance(message)) return `user: ${text}`;
  if (AIMessage.isInstance(message)) {
    const calls = (message.tool_calls ?? []).map((call) => call.name);
    const callText = calls.length > 0 ? `[called ${calls.join(', ')}]` : '';
    return `assistant: ${[text, callText].filter(Boolean).join(' ')}`;
  }
  if (ToolMessage.isInstance(message)) return `tool ${message.name ?? ''}: ${text}`.replace('tool : ', 'tool: ');
  return `${message.type}: ${text}`;
}
