import type { MemoryLevel } from './types.js';

/**
 * Every prompt memloom sends to a language model, in one place. Override any
 * of them through `createMemory({ prompts })`; placeholders are plain
 * function arguments, so an override is type-checked.
 */
export interface Prompts {
  /** Compress a memory to a lower level (passive decay). */
  compress(input: { content: string; from: MemoryLevel; to: MemoryLevel }): { system: string; prompt: string };
  /** Merge new content into an existing memory (similarity >= highSimilarity). */
  merge(input: { oldContent: string; newContent: string }): { system: string; prompt: string };
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
};
