import { z } from 'zod';
import { formatZodIssues } from '../config.js';
import { MemloomError } from '../errors.js';
import { hasCjk } from '../text/tokenize.js';
import type { MemoryRecord, Scope } from '../types.js';

/** Who said a message. */
export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'tool'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

/** One message of a session, as the pipeline's session functions take and return it. */
export interface ConversationMessage {
  role: MessageRole;
  content: string;
  /** The message's id in the caller's system; becomes the provenance (`sources`) of what is made from it. */
  id?: string;
  /** When it was said. */
  at?: Date | string | number;
}

/** One side of a turn: its text and, for provenance, its id. */
export interface TurnMessage {
  content: string;
  id?: string;
}

/** A finished turn, as `extract` and `afterTurn` take it. */
export interface TurnInput {
  /** Where facts are read and written. Pass the user's scope (not the session's) for facts that outlive the session. */
  scope?: Scope;
  user: string | TurnMessage;
  assistant?: string | TurnMessage;
  /** The memories retrieved for this turn (records or search results): the only ids the model may name. */
  retrieved?: ReadonlyArray<MemoryRecord | { memory: MemoryRecord }>;
  /**
   * Stops the call, throwing the signal's reason: checked before each step
   * and each operation, and passed to the model calls (aborted in flight) and
   * the embedder. Operations applied before stay applied, each whole.
   */
  signal?: AbortSignal;
}

const timestamp = z.union([z.date(), z.string().min(1), z.number().finite()]);
const idSchema = z.string().min(1).max(512);
const turnMessageSchema = z.union([z.string(), z.object({ content: z.string(), id: idSchema.optional() })]);
const messageSchema = z.object({ role: z.enum(MESSAGE_ROLES), content: z.string(), id: idSchema.optional(), at: timestamp.optional() });
const retrievedSchema = z.union([z.object({ id: idSchema }), z.object({ memory: z.object({ id: idSchema }) })]);
const turnSchema = z.object({
  scope: z.unknown().optional(),
  user: turnMessageSchema,
  assistant: turnMessageSchema.optional(),
  retrieved: z.array(retrievedSchema).optional(),
});

/** A turn after validation: both sides as `{ content, id? }`, retrieved memories as records. */
export interface NormalizedTurn {
  scope: Scope | undefined;
  user: TurnMessage;
  assistant: TurnMessage;
  retrieved: MemoryRecord[];
  /** The message ids, for `sources`. */
  sources: string[];
  /**
   * The assistant's question this turn's user message answers, when the
   * message just before it was one: part of the context kept with each fact,
   * so "Yes, since last spring" is found by the words of the question.
   */
  question?: string;
}

/** Ends with a question mark (ASCII or full-width). */
const QUESTION_END = /[?？]\s*$/u;

/**
 * The question this turn's user message answers: the message just before it
 * when that is the assistant's and ends with a question mark. Any other
 * message before it (a reply on another topic, the user's own) is not taken:
 * its words would make the facts match what they are not about. The message
 * before is found in the session when one is given and holds the user message
 * (the last user message equal to this turn's, by id or else by text), else it
 * is the last message the pipeline saw in the scope.
 */
export function answeredQuestion(user: TurnMessage, session: readonly ConversationMessage[] | undefined, seen: readonly ConversationMessage[]): string | undefined {
  const found = messageBefore(user, session ?? []);
  const before = found === undefined ? seen[seen.length - 1] : found;
  const text = before?.role === 'assistant' ? before.content.trim() : '';
  return QUESTION_END.test(text) ? text : undefined;
}

function messageBefore(user: TurnMessage, messages: readonly ConversationMessage[]): ConversationMessage | undefined | null {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as ConversationMessage;
    const same = user.id !== undefined && message.id !== undefined ? message.id === user.id : message.content === user.content;
    // Found: the message before it, or null when it opens the session (nothing to fall back to).
    if (message.role === 'user' && same) return messages[index - 1] ?? null;
  }
  return undefined;
}

/** Validate a turn from the caller; INVALID_INPUT names the field, EMPTY_CONTENT an empty user message. */
export function normalizeTurn(input: unknown): NormalizedTurn {
  const parsed = turnSchema.safeParse(input);
  if (!parsed.success) {
    throw new MemloomError({ code: 'INVALID_INPUT', message: `invalid turn: ${formatZodIssues(parsed.error)}` });
  }
  const turn = input as TurnInput;
  const user = toTurnMessage(turn.user);
  const assistant = turn.assistant === undefined ? { content: '' } : toTurnMessage(turn.assistant);
  if (user.content.trim() === '') throw new MemloomError({ code: 'EMPTY_CONTENT', message: 'the turn has an empty user message' });
  const retrieved = (turn.retrieved ?? []).map((entry) => ('memory' in entry ? entry.memory : entry));
  return {
    scope: turn.scope,
    user,
    assistant,
    retrieved,
    sources: [user.id, assistant.id].filter((id): id is string => id !== undefined),
  };
}

/** Validate a message list from the caller (INVALID_INPUT naming the bad message); returns it unchanged. */
export function validateMessages(messages: unknown): readonly ConversationMessage[] {
  const parsed = z.array(messageSchema).safeParse(messages);
  if (!parsed.success) {
    throw new MemloomError({ code: 'INVALID_INPUT', message: `invalid messages: ${formatZodIssues(parsed.error, 'messages')}` });
  }
  return messages as readonly ConversationMessage[];
}

/**
 * A rough token count without a tokenizer: one token per CJK character and
 * per four other characters. Pass your model's own counter where it matters.
 */
export function estimateTokens(text: string): number {
  if (!hasCjk(text)) return Math.ceil(text.length / 4);
  let cjk = 0;
  let other = 0;
  for (const character of text) {
    if (hasCjk(character)) cjk++;
    else other++;
  }
  return cjk + Math.ceil(other / 4);
}

function toTurnMessage(value: string | TurnMessage): TurnMessage {
  return typeof value === 'string' ? { content: value } : { content: value.content, ...(value.id !== undefined ? { id: value.id } : {}) };
}
