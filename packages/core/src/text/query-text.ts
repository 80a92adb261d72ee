import { splitIntoPieces } from './segment-in-pieces.js';
import { CJK_FUNCTION_CHARS, HAN } from './tokenize.js';

/**
 * Chinese words that frame a question inside a message rather than ask it:
 * discourse markers, politeness, "do you remember / tell me / I want to
 * ask", pronoun pairs, in simplified and traditional spelling. A closed
 * class of everyday conversational words; none names a topic a memory could
 * be about (问题, 回答 and 打扰 can, so they are not in it).
 */
export const CHINESE_DISCOURSE_WORDS: readonly string[] = (
  // discourse markers
  '对了 對了 另外 好的 好吧 那么 那麼 其实 其實 话说 話說 ' +
  // politeness and address
  '请问 請問 请教 請教 谢谢 謝謝 多谢 多謝 你好 您好 不好意思 ' +
  // asking, telling, remembering
  '我想问 我想問 想问 想問 问一下 問一下 一下 告诉我 告訴我 还记得 還記得 记不记得 記不記得 ' +
  '不记得 不記得 记得 記得 不知道 知道 ' +
  // conditionals, time of the conversation, pronoun pairs
  '如果 的话 的話 刚才 剛才 你们 你們 我们 我們 咱们 咱們 您'
).split(' ');

/**
 * The version of what `withoutChineseDiscourse` does to a query: it changes
 * whenever the same query may be read otherwise (a word added to or taken
 * from the list, another rule), so that anything keyed by the text of a
 * query (an embedding cache) can tell a reading from an older one. 2: the
 * traditional function characters (嗎, 們, …; `CJK_FUNCTION_CHARS`) count as
 * no word, so 請問你還記得嗎？ is searched as written, as 请问你还记得吗？ is.
 */
export const CHINESE_DISCOURSE_VERSION = 2;

// Longest first, so 不知道 is masked whole rather than leaving 不.
const DISCOURSE = new RegExp([...CHINESE_DISCOURSE_WORDS].sort((a, b) => b.length - a.length).join('|'), 'gu');
/**
 * Characters after which a listed word is part of a content word that the
 * segmenter still cuts after it: 一下|班 (一下班, "as soon as work ends"),
 * 一下|车, 一下|课, and 的话|费 (话费, a phone bill), 的话|梅 (话梅).
 */
const NOT_BEFORE: Readonly<Record<string, string>> = { 一下: '班午子车車课課', 的话: '费費梅', 的話: '费費梅' };
const KANA = /[\u3040-\u30ff]/u;
const FUNCTION_CHARS = new RegExp(`[${[...CJK_FUNCTION_CHARS].join('')}]`, 'gu');
const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u;
const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });

/**
 * A search query with its Chinese discourse words blanked out (each replaced
 * by a space, so no character pair forms across the gap). A listed word is
 * blanked only where it is a word of its own: it starts and ends where the
 * Chinese word segmenter cuts the text, so 对了 stays in 对了解, 好的 in
 * 最好的 and 的话 in 的话剧. Text without Han characters, English
 * included, comes back unchanged, and so does text with kana (Japanese, whose
 * kanji the list would misread), and a query that would keep no word
 * (谢谢！ is still searched as 谢谢). Only queries are read this way;
 * memories are indexed and embedded as written.
 *
 * `我想问一下，他家在哪里？如果不记得就直接说不知道。` → `  ，他家在哪里？  就直接说 。`
 */
export function withoutChineseDiscourse(text: string): string {
  if (!HAN.test(text) || KANA.test(text)) return text;
  const cuts = wordCuts(text);
  const masked = text.replace(DISCOURSE, (word: string, at: number) => {
    const end = at + word.length;
    const next = text.charAt(end);
    const inLongerWord = !cuts.has(at) || !cuts.has(end) || (next !== '' && NOT_BEFORE[word]?.includes(next) === true);
    return inLongerWord ? word : ' ';
  });
  // Nothing left but punctuation and function characters (你, 吗): search the words that were there.
  return LETTER_OR_NUMBER.test(masked.replace(FUNCTION_CHARS, '')) ? masked : text;
}

/** Offsets in `text` where a word begins or ends (its start and end included). */
function wordCuts(text: string): Set<number> {
  const cuts = new Set<number>([0, text.length]);
  let offset = 0;
  for (const piece of splitIntoPieces(text)) {
    for (const part of segmenter.segment(piece)) cuts.add(offset + part.index + part.segment.length);
    offset += piece.length;
  }
  return cuts;
}
