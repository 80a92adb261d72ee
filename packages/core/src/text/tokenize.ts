import { plainAsciiWords } from './ascii-words.js';
import { porterStem } from './porter-stemmer.js';
import { segmentInPieces } from './segment-in-pieces.js';
import { ENGLISH_STOPWORDS } from './stopwords.js';

const segmenter = new Intl.Segmenter('en', { granularity: 'word' });

/** Han, Hiragana, Katakana and Hangul: scripts written without spaces between words. */
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/u;
/** Runs of CJK characters (global: for replace and match). */
export const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+/gu;

/**
 * The version of `tokenize`'s output. It changes whenever the same text may
 * give other terms, so that anything derived from terms (a lexical
 * embedder's vector space, a stored keyword index) can name what it was built
 * with. 2: one-character Chinese function words are no terms on their own.
 * 3: long text is segmented in pieces cut only where no word can continue
 * (`segmentInPieces`); before, a cut after any punctuation or whitespace
 * could split a word such as isn't, 3.14 or a_b, so a text of more than
 * 2,000 characters could give other terms than its words. 4: the
 * traditional forms of the function characters (過 嗎 們 這 個 與 於) are
 * function characters too, as their simplified forms were (not 著: in
 * simplified text it is zhù, as in 著名 and 著作, not the particle 着).
 * 5: with `pastForms: 'verb'` (what keyword indexes and their queries use),
 * the past forms of common irregular English verbs are terms of the verb (went
 * and gone are go, bought is buy; `IRREGULAR_VERBS`).
 */
export const TOKENIZER_VERSION = 5;

export interface TokenizeOptions {
  /** Drop common English words. @default true */
  stopwords?: boolean;
  /** Porter-stem English words. @default true */
  stem?: boolean;
  /**
   * `'verb'`: read the past form of a common irregular verb as the verb when stemming (went → go, bought → buy),
   * so that a keyword query in the present ("When did she go…?") matches a memory told in the past ("she went…").
   * Keyword indexes and their queries use it; what compares statements (merges, the lexical embedder) does not:
   * "I hope to win the marathon" and "I won the marathon" are different news. @default 'asWritten'
   */
  pastForms?: 'verb' | 'asWritten';
  /**
   * Only the terms that name a word of the text (`distinctiveKeywordTerms`): a Chinese character is a term only
   * where the word segmenter reads it as a word on its own (猫 in 我的猫叫什么, not 子 in 孩子), and a pair of two
   * function characters (我的, 我有, 这个) is no term. Kana and Hangul keep every character. @default false
   */
  distinctive?: boolean;
}

/**
 * Split text into search terms, the same way for every store so a keyword
 * query ranks alike everywhere.
 *
 * - Latin text: Unicode word boundaries, lowercased, NFKC-normalized,
 *   possessive `'s` dropped, stopwords removed, Porter-stemmed (with
 *   `pastForms: 'verb'`, a past form of a common irregular verb first read as
 *   the verb: went → go).
 * - Chinese, Japanese, Korean runs: every character and every pair of
 *   adjacent characters, so 咖啡 matches 喝咖啡 without a dictionary.
 */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const useStopwords = options.stopwords ?? true;
  const useStem = options.stem ?? true;
  const pastForms = useStem && options.pastForms === 'verb' ? VERB_OF_PAST_FORM : undefined;
  const distinctive = options.distinctive ?? false;
  const tokens: string[] = [];
  const normalized = text.normalize('NFKC').toLowerCase();
  const asciiWords = plainAsciiWords(normalized);
  if (asciiWords) {
    for (const word of asciiWords) pushLatin(word, tokens, useStopwords, useStem, pastForms);
    return tokens;
  }

  for (const part of segmentInPieces(segmenter, normalized)) {
    if (!part.isWordLike) continue;
    const word = part.segment;
    if (CJK.test(word)) {
      for (const run of word.match(CJK_RUN) ?? []) pushCjk(run, tokens, useStopwords, distinctive);
      const rest = word.replace(CJK_RUN, ' ').trim();
      if (rest) for (const piece of rest.split(/\s+/)) pushLatin(piece, tokens, useStopwords, useStem, pastForms);
      continue;
    }
    pushLatin(word, tokens, useStopwords, useStem, pastForms);
  }
  return tokens;
}

/**
 * The terms a keyword index holds for a text and a keyword query asks for: `tokenize` with past forms read as the
 * verb (went → go), so that a question in the present finds a memory told in the past. Every store's keyword search
 * (core's `TextIndex`, SQLite's FTS rows, Qdrant's sparse vectors) uses it, for documents and queries alike.
 */
export function keywordTerms(text: string): string[] {
  return tokenize(text, { pastForms: 'verb' });
}

/**
 * The query's `keywordTerms` that name one of its words: without a Chinese character that is only part of a longer
 * word (子 of 孩子, 动 of 运动) or a pair of function characters (我的). A memory that shares none of them with a
 * query shares only such characters, as 我对花生过敏，吃了会起疹子 shares 子 with 我孩子多大了: a weak match
 * (`weighWeakMatches`). English terms are all distinctive.
 */
export function distinctiveKeywordTerms(text: string): string[] {
  return tokenize(text, { pastForms: 'verb', distinctive: true });
}

/** True when the text holds any CJK character. */
export function hasCjk(text: string): boolean {
  return CJK.test(text);
}

/**
 * Characters that are Chinese function words on their own (particles, the
 * copula, pronouns): like English stopwords, they are not terms by themselves,
 * only inside pairs, so "他孩子多大了" does not match "养了一只猫" through 了.
 * In simplified and traditional spelling (过/過, 吗/嗎, 们/們, 这/這,
 * 个/個, 与/與, 于/於; the others are written alike in both). Not 著, which
 * simplified Chinese writes for zhù (著名, 著作), not for the particle 着.
 */
export const CJK_FUNCTION_CHARS: ReadonlySet<string> = new Set(Array.from('的了着过吗呢吧啊呀嘛是在和与及或也就都而我你他她它们这那个一有之其于過嗎們這個與於'));

/** A Han character (text is NFKC-normalised first, which maps the compatibility ideographs to these). */
export const HAN = /[\u3400-\u4dbf\u4e00-\u9fff]/u;

/**
 * A CJK run's characters and adjacent pairs. With `distinctive`, a Han character inside a longer word (子 in 孩子)
 * is no term, nor is a pair of two function characters (我的); kana and Hangul keep every character, as Korean
 * words carry their particles (딸이 shares only 딸 with 딸은).
 */
function pushCjk(run: string, tokens: string[], useStopwords: boolean, distinctive: boolean): void {
  const chars = Array.from(run);
  const wordOnItsOwn = chars.length === 1;
  for (let index = 0; index < chars.length; index++) {
    const char = chars[index] as string;
    const inLongerHanWord = distinctive && !wordOnItsOwn && HAN.test(char);
    if ((!useStopwords || !CJK_FUNCTION_CHARS.has(char)) && !inLongerHanWord) tokens.push(char);
    const next = chars[index + 1];
    if (next === undefined) continue;
    const functionPair = distinctive && CJK_FUNCTION_CHARS.has(char) && CJK_FUNCTION_CHARS.has(next);
    if (!functionPair) tokens.push(char + next);
  }
}

/**
 * Common irregular English verbs, each as `verb past-form…`: a question asks
 * "When did she go…?", the memory says "she went…", and the Porter stemmer
 * leaves went and bought as they are. Forms that are as often another word (a
 * noun, an adjective, a name) are left out: left, found, saw, felt, fell, lay,
 * lain, lit, led, rose, bore, born, bit, fed, meant, read, put; thought, shot,
 * met, sat, won, drew, drove, sung, hung, rung, broke, spoke, stole, drunk, woke.
 */
const IRREGULAR_VERBS =
  'become became|begin began begun|bend bent|bite bitten|bleed bled|blow blew blown|break broken|bring brought|build built|' +
  'buy bought|catch caught|choose chose chosen|come came|dig dug|draw drawn|drink drank|drive driven|eat ate eaten|' +
  'fight fought|fly flew flown|forget forgot forgotten|forgive forgave forgiven|freeze froze frozen|get got gotten|give gave given|' +
  'go went gone|grow grew grown|hear heard|hide hid hidden|hold held|keep kept|know knew known|lose lost|make made|' +
  'overcome overcame|pay paid|ride rode ridden|ring rang|run ran|say said|see seen|seek sought|sell sold|send sent|' +
  'shake shook shaken|show shown|sing sang|sleep slept|speak spoken|spend spent|stand stood|' +
  'steal stolen|sweep swept|swim swam swum|take took taken|teach taught|tell told|throw threw thrown|' +
  'understand understood|wake woken|wear wore worn|weep wept|write wrote written';
/** Past form → the verb, e.g. went → go. */
const VERB_OF_PAST_FORM: ReadonlyMap<string, string> = new Map(
  IRREGULAR_VERBS.split('|').flatMap((group) => {
    const [verb, ...forms] = group.split(' ') as [string, ...string[]];
    return forms.map((form): [string, string] => [form, verb]);
  }),
);

function pushLatin(word: string, tokens: string[], useStopwords: boolean, useStem: boolean, pastForms?: ReadonlyMap<string, string>): void {
  let cleaned = word.replace(/['’]s$/u, '').replace(/['’]/gu, '');
  if (!cleaned) return;
  if (useStopwords && ENGLISH_STOPWORDS.has(cleaned)) return;
  if (useStem) cleaned = porterStem(pastForms?.get(cleaned) ?? cleaned);
  tokens.push(cleaned);
}
