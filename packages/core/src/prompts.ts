import type { MemoryCategory, MemoryLevel } from './types.js';

/** What a prompt sends to the model: a system message and a user message. */
export interface PromptText {
  system: string;
  prompt: string;
}

/** A memory as a prompt shows it: `[id] (category, updated 2024-02-20, 10 days ago) text`. */
export interface PromptMemory {
  id: string;
  content: string;
  category: MemoryCategory;
  /** ISO 8601. */
  updatedAt: string;
  /** "10 days ago", "3 hours ago". */
  age: string;
  importance: number;
}

/** One message of a conversation as a prompt shows it. */
export interface PromptMessage {
  role: string;
  content: string;
}

/** One earlier round of a review: the model's answer and, when it asked, the search it got. */
export interface ReviewRound {
  answer: string;
  search?: { query: string; results: PromptMemory[] };
}

/** One tunable policy parameter as the evolution prompt shows it. */
export interface PromptPolicyParameter {
  key: string;
  value: number | boolean;
  /** "integer 1..100". */
  range: string;
  description: string;
}

/**
 * Every prompt memloom sends to a language model, in one place. Override any
 * of them through `createMemory({ prompts })` or `createMemoryPipeline({ prompts })`;
 * placeholders are plain function arguments, so an override is type-checked.
 * The answer formats (operation lines, decisions, JSON) are what the parsers
 * accept: an override must keep them.
 */
export interface Prompts {
  /** Compress a memory to a lower level (passive decay). Answer: the text. */
  compress(input: { content: string; from: MemoryLevel; to: MemoryLevel }): PromptText;
  /** Merge new content into an existing memory (similarity >= highSimilarity). Answer: the text. */
  merge(input: { oldContent: string; newContent: string }): PromptText;
  /**
   * Seed 002's background monitor, after a turn. Answer: one operation per
   * line, `[ADD] fact`, `[ADD USER] fact`, `[UPDATE:id] fact`,
   * `[UPDATE:id USER] fact`, `[BOOST:id]`, `[DELETE:id]` or `[SKIP]`.
   */
  extract(input: { user: string; assistant: string; memories: PromptMemory[]; now: string }): PromptText;
  /**
   * Seed 002's reviewer, one round. Answer: reasoning ending in `[PROMOTE]`,
   * `[KEEP]` or `[DELETE]` (promotion), `[KEEP]` or `[DELETE]` (decay), or
   * `[SEARCH: keywords]` while `searchesLeft > 0`.
   */
  review(input: {
    kind: 'promotion' | 'decay';
    memory: PromptMemory;
    related: PromptMemory[];
    rounds: ReviewRound[];
    searchesLeft: number;
    threshold: number;
    resetTo: number;
  }): PromptText;
  /** Seeds 001/002: older messages of a session become an episode. Answer: the summary text. */
  summarizeSession(input: { messages: PromptMessage[]; now: string }): PromptText;
  /**
   * Seed 001's long-term compression. Answer: JSON
   * `{"groups":[{"keep":"id","absorb":["id"],"content":"text"}]}`.
   */
  compressLongTerm(input: { memories: PromptMemory[]; characters: number; threshold: number }): PromptText;
  /** Seed 001's evolution. Answer: one JSON object of parameter changes, `{}` for none. */
  evolve(input: { messages: PromptMessage[]; parameters: PromptPolicyParameter[] }): PromptText;
}

const LEVEL_GUIDE: Record<MemoryLevel, string> = {
  full: 'the complete text',
  summary: 'one short sentence that keeps names, numbers and dates',
  tag: 'three to six hashtags such as "#job:engineer #city:Beijing"',
  trace: 'a few words saying only what the memory was about, e.g. "once had a memory about work"',
  archive: 'a label "[archived]" followed by one or two hashtags',
};

export const defaultPrompts: Prompts = {
  compress: ({ content, to }) => ({
    system:
      'You compress long-term memories of an AI assistant. Older memories keep less detail. ' +
      'Answer with the compressed memory only, in the same language as the memory, with no preamble.',
    prompt: `Compress this memory to ${LEVEL_GUIDE[to]}.\n\nMemory:\n${content}`,
  }),
  merge: ({ oldContent, newContent }) => ({
    system:
      'You maintain the long-term memory of an AI assistant. Merge an existing memory with new information into one ' +
      'concise memory that keeps every key fact (names, numbers, dates). When they disagree, the new information wins. ' +
      'Answer with the merged memory only, in the language of the new information, with no preamble.',
    prompt: `Existing memory:\n${oldContent}\n\nNew information:\n${newContent}`,
  }),
  extract: ({ user, assistant, memories, now }) => ({
    system: [
      "You are the background memory monitor of an AI assistant. After each turn you read the conversation and the long-term memories that were retrieved for it, and decide what to remember. You never talk to the user.",
      '',
      'Answer with one operation per line and nothing else:',
      '[ADD] <fact>               a new fact worth remembering that you inferred',
      '[ADD USER] <fact>          a new fact the user stated',
      '[UPDATE:<id>] <fact>       replace memory <id> with the corrected, complete fact',
      '[UPDATE:<id> USER] <fact>  the same, when the user stated the correction',
      "[BOOST:<id>]               memory <id> really shaped the assistant's reply",
      '[DELETE:<id>]              memory <id> is wrong or obsolete and nothing replaces it',
      '[SKIP]                     nothing to remember from this turn',
      '',
      'Rules:',
      '1. Two memories that seem to disagree may both be true at different times ("the user was tense ten days ago" and "the user is relaxed now"): ADD the new state; do not UPDATE or DELETE the old one.',
      '2. BOOST a memory only when the reply really used it. A memory that was retrieved but not used (the user likes cats; the turn was about the weather) is not boosted.',
      '3. When the user corrects a memory, UPDATE it with the corrected fact; its old text stays in its history.',
      '4. Only name ids from the list of retrieved memories. Core and system memories are never deleted.',
      '5. Write each fact as one short standalone sentence about the user, in the language of the conversation. Do not store greetings, small talk, questions, or the assistant\'s own words.',
    ].join('\n'),
    prompt: [
      `Now: ${now}`,
      '',
      'Retrieved memories:',
      memories.length > 0 ? memories.map(memoryLine).join('\n') : '(none)',
      '',
      'Conversation:',
      `User: ${user}`,
      `Assistant: ${assistant || '(no reply)'}`,
    ].join('\n'),
  }),
  review: ({ kind, memory, related, rounds, searchesLeft, threshold, resetTo }) => {
    const task =
      kind === 'promotion'
        ? [
            `You review one long-term memory of an AI assistant whose importance has reached ${threshold}. Decide whether it becomes a core memory, which never decays.`,
            "Core memories are lasting, important facts: the user's name and birthday, long-held preferences, important promises.",
            'Not core: temporary states ("the user is tired today"), short-term plans, topics that were merely frequent lately.',
          ]
        : [
            `You review one long-term memory of an AI assistant whose importance has decayed below ${threshold}. Decide whether to keep it.`,
            'Ask: does it still have value? Has a newer memory replaced it? Would deleting it make the assistant forget something important?',
          ];
    const decisions =
      kind === 'promotion'
        ? ['[PROMOTE]  make it a core memory', '[KEEP]     leave it a normal memory', '[DELETE]   it is wrong or useless: delete it']
        : [`[KEEP]     keep it (its importance is reset to ${resetTo})`, '[DELETE]   delete it'];
    const search =
      searchesLeft > 0
        ? `Before deciding you may ask for related memories: answer only [SEARCH: keywords] (${searchesLeft} search${searchesLeft === 1 ? '' : 'es'} left).`
        : 'No searches are left: decide now.';
    const history = rounds.flatMap((round, index) => [
      '',
      `Your answer ${index + 1}:`,
      round.answer,
      ...(round.search
        ? [`Search results for "${round.search.query}":`, round.search.results.length > 0 ? round.search.results.map(memoryLine).join('\n') : '(none)']
        : []),
    ]);
    return {
      system: [...task, search, 'Think briefly, then end your answer with exactly one of:', ...decisions].join('\n'),
      prompt: [
        'Memory under review:',
        memoryLine(memory),
        '',
        'Related memories:',
        related.length > 0 ? related.map(memoryLine).join('\n') : '(none)',
        ...history,
      ].join('\n'),
    };
  },
  summarizeSession: ({ messages, now }) => ({
    system:
      'You summarize part of a conversation between a user and an AI assistant into an episodic memory: one short paragraph ' +
      'saying what was talked about, what was decided and what the user said about themselves, keeping names, numbers and dates. ' +
      'Answer with the summary only, in the language of the conversation, with no preamble.',
    prompt: `Now: ${now}\n\nConversation:\n${messages.map(messageLine).join('\n')}`,
  }),
  compressLongTerm: ({ memories, characters, threshold }) => ({
    system: [
      `You consolidate the long-term memory of an AI assistant: it holds ${characters} characters and should stay under ${threshold}.`,
      'Merge memories that say the same thing or belong together into fewer, shorter memories, keeping every key fact (names, numbers, dates).',
      'Answer with JSON only: {"groups":[{"keep":"<id>","absorb":["<id>"],"content":"<the consolidated memory>"}]}',
      '"keep" is the memory that survives with the new content; "absorb" lists the memories whose facts are now in it, which are removed.',
      'Group only memories of the same kind: core and fact together, episodes with episodes. Name each id at most once.',
      'Memories you leave out stay as they are. Write in the language of the memories.',
    ].join('\n'),
    prompt: `Memories:\n${memories.map(memoryLine).join('\n')}`,
  }),
  evolve: ({ messages, parameters }) => ({
    system: [
      "You tune the memory policy of an AI assistant. Read the recent conversation and the current policy, and suggest changes only where the conversation shows a clear need (for example, the user keeps asking about things said long ago: a larger retrieve_limit or recent_days).",
      'Answer with one JSON object holding only the parameters to change, e.g. {"retrieve_limit": 15}, or {} for no change. Stay inside the allowed ranges.',
    ].join('\n'),
    prompt: [
      'Current policy:',
      ...parameters.map((parameter) => `- ${parameter.key} = ${String(parameter.value)} (${parameter.range}): ${parameter.description}`),
      '',
      'Recent conversation:',
      messages.length > 0 ? messages.map(messageLine).join('\n') : '(none)',
    ].join('\n'),
  }),
};

function memoryLine(memory: PromptMemory): string {
  const date = memory.updatedAt.slice(0, 10);
  const text = memory.content.replace(/\s+/g, ' ').trim();
  return `[${memory.id}] (${memory.category}, updated ${date}, ${memory.age}, importance ${memory.importance}) ${text}`;
}

function messageLine(message: PromptMessage): string {
  const role = message.role === 'user' ? 'User' : message.role === 'assistant' ? 'Assistant' : message.role;
  return `${role}: ${message.content}`;
}
