import { CJK_FUNCTION_CHARS } from './tokenize.js';

/**
 * Chinese words that frame a question inside a message rather than ask it:
 * discourse markers, politeness, "do you remember / tell me / I want to
 * ask", pronoun pairs. A closed class of everyday conversational words;
 * none names a topic a memory could be about.
 */
export const CHINESE_DISCOURSE_WORDS: readonly string[] = (
  // discourse markers
  '对了 另外 好的 好吧 那么 其实 话说 ' +
  // politeness and address
  '请问 请教 谢谢 多谢 你好 您好 不好意思 打扰 ' +
  // asking, telling, remembering
  '我想问 想问 问一下 一下 告诉我 还记得 记不记得 不记得 记得 不知道 知道 回答 问题 ' +
  // conditionals, time of the conversation, pronoun pairs
  '如果 的话 刚才 你们 我们 咱们 您'
).split(' ');

// Longest first, so 不知道 is masked whole rather than leaving 不.
const DISCOURSE = new RegExp([...CHINESE_DISCOURSE_WORDS].sort((a, b) => b.length - a.length).join('|'), 'gu');
const HAN = /[\u3400-\u4dbf\u4e00-\u9fff]/u;
const FUNCTION_CHARS = new RegExp(`[${[...CJK_FUNCTION_CHARS].join('')}]`, 'gu');
const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u;

/**
 * A search query with its Chinese discourse words blanked out (each replaced
 * by a space, so no character pair forms across the gap). Text without Han
 * characters, English included, comes back unchanged, and so does a query
 * that would keep no word (谢谢！ is still searched as 谢谢). Only
 * queries are read this way; memories are indexed and embedded as written.
 *
 * `我想问一下，他家在哪里？如果不记得就直接说不知道。` → `  ，他家在哪里？  就直接说 。`
 */
export function withoutChineseDiscourse(text: string): string {
  if (!HAN.test(text)) return text;
  const masked = text.replace(DISCOURSE, ' ');
  // Nothing left but punctuation and function characters (你, 吗): search the words that were there.
  return LETTER_OR_NUMBER.test(masked.replace(FUNCTION_CHARS, '')) ? masked : text;
}
