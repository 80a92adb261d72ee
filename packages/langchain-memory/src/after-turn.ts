import { hasCjk, splitSentences, type AddResult, type Memory, type MemoryRecord, type Scope } from '@memloom/core';

/** One finished turn of a conversation, as the middleware hands it over. */
export interface FinishedTurn {
  /** Where facts are written: the user's scope, not the thread's, so they outlive the session. */
  scope: Scope;
  /** What the user said this turn (usually one message), with the message ids for provenance. */
  user: Array<{ content: string; id?: string }>;
  /** The assistant's final answer. */
  assistant?: { content: string; id?: string };
  /** Memories that were put into the prompt this turn. */
  retrieved: MemoryRecord[];
}

export interface TurnRecord {
  /** The statements taken from the user's words, in order. */
  statements: string[];
  /** What the strategy engine decided for each (merge / keep both / new). */
  results: AddResult[];
}

/**
 * Record what the user said this turn through the strategy engine.
 *
 * This is the deterministic path, and the one place the middleware records a
 * turn: the user's first-person statements ("I live in Lyon", "我养了一只猫")
 * are added one by one as verified facts with `trigger: 'extraction'`, so a
 * repeated statement merges into the memory it repeats, a related one is kept
 * beside it and a new one is created. Questions and requests are left out;
 * nothing is updated by id or deleted this way (that takes a model).
 */
export async function recordTurn(memory: Memory, turn: FinishedTurn): Promise<TurnRecord> {
  const statements: string[] = [];
  const results: AddResult[] = [];
  for (const message of turn.user) {
    for (const statement of userStatements(message.content)) {
      statements.push(statement);
      results.push(
        await memory.add(statement, {
          scope: turn.scope,
          category: 'fact',
          type: 'user',
          source: 'user',
          verified: true,
          trigger: 'extraction',
          ...(message.id ? { sources: [message.id] } : {}),
        }),
      );
    }
  }
  return { statements, results };
}

const FIRST_PERSON = /\b(?:i|i'm|i've|i'd|i'll|im|my|mine|me|we|we're|our|ours)\b/iu;
const FIRST_PERSON_CJK = /[我咱]/u;
const QUESTION_START = /^(?:who|what|when|where|why|how|which|do|does|did|is|are|am|was|were|can|could|would|will|should|shall|may)\b/iu;
const REQUEST_START = /^(?:please|can you|could you|would you|let's|tell me|show me|help me|give me|请|帮我|麻烦)/iu;
const REMEMBER_PREFIX = /^(?:(?:please\s+)?(?:remember|note)(?:\s+that)?\s*[:,]?\s*|请?(?:记住|记下)\s*[:：,，]?\s*)/iu;
const GREETING = /^(?:hi|hello|hey|thanks|thank you|ok|okay|你好|您好|谢谢|好的)(?:[\s,.!，。！]+|$)/iu;

/**
 * The user's statements about themselves: sentences in the first person that
 * are not questions or requests, with a leading greeting or "remember that"
 * dropped.
 */
export function userStatements(text: string): string[] {
  const statements: string[] = [];
  for (const raw of splitSentences(text)) {
    if (/[?？]\s*$/u.test(raw)) continue;
    const sentence = raw.trim().replace(GREETING, '').replace(REMEMBER_PREFIX, '').trim();
    const bare = sentence.replace(/[.!。！…~]+$/u, '').trim();
    if (bare === '' || QUESTION_START.test(bare) || REQUEST_START.test(bare)) continue;
    const personal = hasCjk(bare) ? FIRST_PERSON_CJK.test(bare) && Array.from(bare).length >= 4 : FIRST_PERSON.test(bare) && bare.split(/\s+/u).length >= 3;
    if (personal && !statements.includes(sentence)) statements.push(sentence);
  }
  return statements;
}
