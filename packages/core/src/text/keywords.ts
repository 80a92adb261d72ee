import { plainAsciiWords } from './ascii-words.js';
import { segmentInPieces } from './segment-in-pieces.js';
import { englishNegation, NEGATING_WORDS } from './statement-terms.js';
import { CHINESE_STOPWORDS, ENGLISH_STOPWORDS } from './stopwords.js';

const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
const HAN = /\p{Script=Han}/u;
const CJK = /[\u3007\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/u;

/**
 * The words that carry a text's meaning, in the order they first appear:
 * names, numbers and longer content words before short common ones.
 * Used by the deterministic compressor (tags, traces) when no model is set.
 */
export function keywords(text: string, limit = 6): string[] {
  // NFKC leaves ASCII as it is, so plain ASCII text skips the normalization.
  const rawAsciiWords = plainAsciiWords(text);
  const normalized = rawAsciiWords ? text : text.normalize('NFKC');
  // Plain ASCII words (see ascii-words.ts) hold no CJK and no apostrophe: the same rules, without the regular expressions.
  // A negation keeps what it negates up to a punctuation mark, which the plain words leave out: such a text is segmented.
  const plainWords = rawAsciiWords ?? plainAsciiWords(normalized);
  const asciiWords = plainWords?.some((word) => PLAIN_NEGATIONS.has(word.toLowerCase())) ? undefined : plainWords;
  const stopword = asciiWords ? isAsciiStopword : isStopword;
  const score = asciiWords ? asciiKeywordScore : keywordScore;
  // Candidates in the order they first appear (their position is their index here).
  const seen = new Set<string>();
  const found: string[] = [];
  const scores: number[] = [];
  for (const word of asciiWords ?? joinedWords(segmentInPieces(segmenter, normalized))) {
    const lower = word.toLowerCase();
    if (seen.has(lower) || stopword(word, lower)) continue;
    seen.add(lower);
    found.push(word);
    scores.push(score(word));
  }
  if (!Number.isInteger(limit) || limit < 0) {
    // Array.slice's reading of an odd limit (negative: from the end), kept as it was.
    return found
      .map((word, position) => ({ word, position, score: scores[position] as number }))
      .sort((a, b) => b.score - a.score || a.position - b.position)
      .slice(0, limit)
      .sort((a, b) => a.position - b.position)
      .map((entry) => entry.word);
  }
  if (found.length <= limit) return found;
  // The `limit` best scores, the earlier word first on a tie, returned in text order. A
  // selection, not a sort: limit is small (2 to 6) and a text has a handful of candidates.
  const chosen = new Array<boolean>(found.length).fill(false);
  for (let pick = 0; pick < limit; pick++) {
    let best = -1;
    for (let index = 0; index < found.length; index++) {
      if (!chosen[index] && (best < 0 || (scores[index] as number) > (scores[best] as number))) best = index;
    }
    chosen[best] = true;
  }
  return found.filter((_, index) => chosen[index]);
}

/**
 * Word-like segments, Chinese ones put back together where the segmenter splits a word it does not
 * know: a run of single characters joins (小|橘 -> 小橘), a noun suffix joins the word before it
 * (工程|师 -> 工程师, 计算|机 -> 计算机), a number goes on as one (三|十二岁 -> 三十二岁, 两千|五百元,
 * 两|只|猫 -> 两只猫), and a negation keeps what it negates (不当|老师 -> 不当老师: "#不当 #老师" would
 * read as the opposite). An English negation does too, taking up to three words, up to a punctuation
 * mark, a line break or a stopword after a word it took, joined with hyphens (the form a tag allows): "not a
 * teacher anymore" is not-teacher-anymore, "don't eat meat" not-eat-meat, "never been to Japan" never-Japan.
 * Where it may not negate what follows, the words stay alone (as they were): in a question ("Isn't Paris
 * lovely?"), before only/just/merely/simply or a pronoun ("Can't you", "No I live in Paris"), before a
 * subject after the word it took ("don't think I like jazz"), in "can't wait/believe/help" and "couldn't
 * be", and for a "No" opening a sentence before a capitalised word ("No Country for Old Men"). A Chinese
 * negation takes one English word (我不吃meat) and ends there; a cut number goes on only where a place
 * value (十百千万亿) is at the cut, or with numerals read digit by digit (二零|一九年), or with a measure
 * word (两|只): 五一|一起去 stays two words.
 * A character left alone joins a neighbour only where they clearly make one word (see
 * `joinLoneCharacters`). A grammar character or a verb (她, 在, 去, 当, 学…) joins nothing in front of
 * it, and a pronoun the segmenter glued to grammar stands alone (我不|喜欢 is 我 and 不喜欢: the
 * pronoun is not what is negated).
 * Exported for the tests' reference implementation, which reads the whole text with one segmenter.
 */
export function joinedWords(segments: Iterable<Pick<Intl.SegmentData, 'segment' | 'isWordLike'>>): string[] {
  const pieces: Piece[] = [];
  // Whether this segment follows the last one with no space or punctuation between.
  let adjacent = false;
  // The English negation still taking the words after it.
  let negated: NegatedPhrase | undefined;
  // The English negated phrases of the clause being read: a question mark at its end undoes them ("Isn't Paris lovely?").
  let inClause: NegatedPhrase[] = [];
  // No word of the sentence is read yet ("No Country for Old Men").
  let sentenceStart = true;
  // The negation takes the word: the form a tag allows, words joined with hyphens ("not-eat-meat").
  const negate = (phrase: NegatedPhrase, word: string) => {
    phrase.taken.push(word);
    phrase.piece.text = [phrase.negation, ...phrase.taken].join('-');
    if (phrase.taken.length === NEGATED_PHRASE_WORDS) negated = undefined;
  };
  const add = (word: string) => {
    const previous = adjacent ? pieces[pieces.length - 1] : undefined;
    const afterGap = !adjacent;
    adjacent = true;
    const atStart = sentenceStart;
    sentenceStart = false;
    if (!CJK.test(word)) {
      // 我不吃meat: a Chinese negation takes an English word written right after it.
      if (previous?.kind === 'negation' && !isStopword(word, word.toLowerCase()) && Array.from(previous.text).length + word.length <= NEGATED_PHRASE_CHARS) {
        // It ends there: 没有car但有bike is 没有car, 但有 and bike.
        previous.text += word;
        previous.kind = 'word';
        return;
      }
      const negation = negationOf(word);
      if (negation === undefined && negated) {
        const lower = word.toLowerCase();
        const next = negated.taken.length === 0;
        // "not only… but also", "don't just like" negate nothing, as 不仅 does not; nor do "Can't you", "don't we",
        // "No I", "No Country for Old Men" (a capitalised word after a "No" opening the sentence), "can't wait".
        if (NOT_NEGATED.test(lower) || (next && PRONOUN.test(lower)) || (negated.initialNo && next && /^\p{Lu}/u.test(word)) || (next && IDIOM.test(`${negated.written.toLowerCase().replace(/['’]/gu, '')} ${lower}`))) negated = undefined;
        // Stopwords before the first word it takes are skipped ("not a teacher"); one after ends it ("not a teacher and").
        else if (!isStopword(word, lower)) return negate(negated, word);
        else if (!next) {
          // "I don't think I like jazz" negates the clause after "think", not "think": the words stand alone.
          if (SUBJECT_PRONOUN.test(lower)) undo(negated);
          negated = undefined;
        }
      }
      const piece: Piece = { text: word, kind: 'other', afterGap };
      pieces.push(piece);
      // A negation alone ("No, I live in Paris") stays as written, and is a stopword or a word as before.
      if (negation !== undefined) {
        negated = { piece, negation, written: word, taken: [], initialNo: atStart && negation === 'no' };
        inClause.push(negated);
      }
      return;
    }
    const length = Array.from(word).length;
    // "I don't like 香菜": a Chinese word the segmenter found whole is what an English negation negates.
    if (negated && length > 1 && !isStopword(word, word)) return negate(negated, word);
    negated = undefined;
    if (previous?.kind === 'negation' && !PARTICLES.includes(word) && Array.from(previous.text).length + length <= NEGATED_PHRASE_CHARS) {
      previous.text += word;
      return;
    }
    // A number the segmenter cut goes on (三|十二岁, 两千|五百元), and takes a measure word that is also grammar
    // (两|只, then 猫 joins the run: 两只猫); a unit of its own joins as any lone character does (三十|岁).
    // Only where a place value is at the seam, the next segment is numerals read digit by digit (二零|一九年) or a
    // measure word: 五一|一起去 is 五一 and 一起去.
    if (previous && previous.text.length <= NUMBER_CHARS && CHINESE_NUMBER.test(previous.text) && ((NUMERALS.includes(word[0] as string) && (PLACE_VALUES.includes(word[0] as string) || PLACE_VALUES.includes(previous.text.slice(-1)) || DIGITS_THEN_UNIT.test(word))) || MEASURE_WORDS.includes(word))) {
      previous.text += word;
      previous.kind = length === 1 ? 'run' : 'word';
      return;
    }
    if (isNegation(word)) pieces.push({ text: word, kind: 'negation', afterGap });
    // A unit after a number ("1000元", "32岁") joins nothing either.
    else if (length === 1 && (NOT_JOINED.includes(word) || (previous?.kind === 'other' && HAN.test(word)))) pieces.push({ text: word, kind: 'grammar', afterGap });
    else if (length === 1 && (previous?.kind === 'single' || previous?.kind === 'run')) {
      previous.text += word;
      previous.kind = 'run';
    } else if (length === 1 && previous?.kind === 'word' && NOUN_SUFFIXES.includes(word)) previous.text += word;
    else pieces.push({ text: word, kind: length === 1 ? 'single' : 'word', afterGap });
  };
  for (const part of segments) {
    if (!part.isWordLike) {
      adjacent = false;
      // Punctuation (anything but spaces) ends a negated phrase ("I can't swim, but I love the beach"), and so does a
      // line break (a session summary reads "Married: no\nKids: two daughters").
      if (part.segment.trim() || LINE_BREAK.test(part.segment)) {
        negated = undefined;
        // A question negates nothing ("Why don't we go hiking?"), and only in its own clause ("I do not eat meat, do you?" keeps not-eat-meat).
        if (/[?？]/u.test(part.segment)) inClause.forEach(undo);
        inClause = [];
      }
      if (SENTENCE_END.test(part.segment)) sentenceStart = true;
      continue;
    }
    const word = part.segment.replace(/['’]s$/u, '');
    const [first, ...rest] = Array.from(word);
    // 我在, 我有, 我不, 我还没: the pronoun, then the rest.
    if (rest.length > 0 && PRONOUNS.includes(first as string) && rest.every((char) => NOT_JOINED.includes(char) || NEGATIONS.includes(char))) {
      add(first as string);
      add(rest.join(''));
    } else add(word);
  }
  return joinLoneCharacters(pieces).flatMap((piece) => piece.words ?? [piece.text]);
}

/**
 * A Chinese character still alone joins the word right after it (王|小明 -> 王小明, 宽|窄巷子 ->
 * 宽窄巷子) unless that is a time or a number (猫|三年, 狗|今年, 下|周一); else the word before it
 * (第一|天 -> 第一天, 西湖|区 -> 西湖区) unless that is grammar (我有|车, 我的|狗); else the verb before
 * it (养|猫 -> 养猫, 有|房 -> 有房), a number excepted (有|两|只); else it stays alone (and is left out).
 */
function joinLoneCharacters(pieces: Piece[]): Piece[] {
  const result: Piece[] = [];
  // Chinese words only: a lone kana or hangul, or one next to such words, stays as it was.
  const isHanWord = (other: Piece) => (other.kind === 'word' || other.kind === 'run') && HAN.test(other.text);
  for (let index = 0; index < pieces.length; index++) {
    const piece = pieces[index] as Piece;
    const next = pieces[index + 1];
    const before = result[result.length - 1];
    const lone = piece.kind === 'single' && HAN.test(piece.text);
    if (lone && next && !next.afterGap && isHanWord(next) && !TIME_OR_NUMBER.test(next.text)) {
      next.text = piece.text + next.text;
      next.afterGap = piece.afterGap;
    } else if (lone && before && !piece.afterGap && isHanWord(before) && !isGrammarPair(Array.from(before.text))) {
      before.text += piece.text;
    } else if (lone && before && !piece.afterGap && before.kind === 'grammar' && VERBS.includes(before.text) && !NUMERALS.includes(piece.text)) {
      before.text += piece.text;
      before.kind = 'word';
    } else result.push(piece);
  }
  return result;
}

interface Piece {
  text: string;
  /** An English negated phrase undone: the negation and the words it took, each a word again. */
  words?: string[];
  /** `single`: one character alone; `run`: single characters joined; `grammar`: a character that never joins. */
  kind: 'single' | 'run' | 'word' | 'grammar' | 'negation' | 'other';
  /** It follows a space or punctuation (or starts the text): nothing before it to join. */
  afterGap: boolean;
}

/** Numerals read digit by digit, up to a unit of time: 二〇二|三年, 二零|一九年 (a year). */
const DIGITS_THEN_UNIT = /^[零〇一二三四五六七八九]+[年号號]?$/u;
const NUMERALS = '零〇一二两三四五六七八九十百千万亿兩萬億';
/** The numerals that give a place value: a number cut by the segmenter goes on where one of them is at the cut (see `joinedWords`). */
const PLACE_VALUES = '十百千万亿萬億';
/** A number or a time: starts or ends with a numeral or a digit (三年, 周一), or ends in a unit of time (今年, 明天, 下午). */
const TIME_OR_NUMBER = new RegExp(`^[\\d${NUMERALS}]|[\\d${NUMERALS}年月日天周号號点點时時午]$`, 'u');

const PRONOUNS = '我你他她它您咱';

/** Grammar: pronouns, particles, prepositions, conjunctions, adverbs and the auxiliaries 想, 要, 能 (traditional forms too). */
const GRAMMAR =
  '的了是在和与也就都而着过我你他她它您咱这那哪谁很吗呢吧啊呀把被让给对从到向往为以于叫' +
  '跟同及或又再才还只最更太挺每各该能要想' +
  '這們為於對從讓給還過著嗎與該';

/** Common verbs: 去宽窄巷子 is 去 and 宽窄巷子, 下周一 is 下 and 周一, but two of them make a word (开会, 学会, 买卖). */
const VERBS = '上下有去来当做说看听读学写吃喝住买卖用玩开坐打找送请带养搬考教起回走跑订念帮会' + '來當說聽讀學寫買賣開帶養訂幫會';

/** Single characters that never join a word in front of them. */
const NOT_JOINED = GRAMMAR + VERBS;

/** The characters that start a negation. */
const NEGATIONS = '不没沒别別未';

/** Particles that end a negated phrase ("不当老师了" is 不当老师). */
const PARTICLES = '的了吗呢吧啊呀嗎';

/** A negation and what it negates ("不当老师", "从来没去过日本", "不吃辣") are one keyword of at most this many characters. */
const NEGATED_PHRASE_CHARS = 8;

/** An English negation takes at most this many words after it ("not-eat-red-meat"). */
const NEGATED_PHRASE_WORDS = 3;

interface NegatedPhrase {
  /** The piece holding the negation, then the words it took. */
  piece: Piece;
  /** The negation as `englishNegation` writes it: "don't" is "not". */
  negation: string;
  /** The negation as the text writes it ("Can't"). */
  written: string;
  /** The words it took. */
  taken: string[];
  /** A "No" opening a sentence. */
  initialNo: boolean;
}

/** Where the negation may not negate what follows: the negation and the words it took stay separate words. */
function undo(phrase: NegatedPhrase): void {
  if (phrase.taken.length > 0) phrase.piece.words = [phrase.written, ...phrase.taken];
}

/** Words that end a negated phrase before it takes them: "not only… but also", "don't just like cats, I love them". */
const NOT_NEGATED = /^(?:only|just|merely|simply)$/u;

/** A pronoun right after a negation is not what it negates ("Can't you", "Why don't we", "No I live in Paris"). */
const PRONOUN = /^(?:i|you|we|he|she|they|it|me|us|him|them)$/u;

/** A subject after a word it took starts a clause the negation is about: "I don't think I like jazz" negates no "think". */
const SUBJECT_PRONOUN = /^(?:i|we|he|she|they)$/u;

/** A negation and the word right after it that mean no negation ("can't wait", "couldn't be happier"), apostrophes left out. */
const IDIOM = /^(?:cant|cannot|couldnt) (?:wait|believe|help)$|^couldnt be$/u;

const LINE_BREAK = /[\n\r\u2028\u2029]/u;

/** The end of a sentence: a full stop, an exclamation or a question mark, or a line break. */
const SENTENCE_END = /[.!?。！？\n\r\u2028\u2029]/u;

/**
 * The English negation a word is (`englishNegation`), a contraction written without its apostrophe
 * ("dont", "isnt": the only stopwords ending in "nt") included.
 */
function negationOf(word: string): string | undefined {
  const lower = word.toLowerCase();
  return lower.endsWith('nt') && ENGLISH_STOPWORDS.has(lower) ? 'not' : englishNegation(lower);
}

/** The negations (`negationOf`) a plain ASCII word can be: with no apostrophe, NEGATING_WORDS and the stopwords ending in "nt". */
const PLAIN_NEGATIONS: ReadonlySet<string> = new Set([...NEGATING_WORDS, ...[...ENGLISH_STOPWORDS].filter((word) => word.endsWith('nt'))]);

/** A Chinese number, ordinal or not: 三, 三十, 两千, 第十. */
const CHINESE_NUMBER = new RegExp(`^第?[${NUMERALS}]+$`, 'u');

/** The longest number that goes on ("一千二百三十四万五千六百"): a run of numerals longer is no number, and is not read again at each join. */
const NUMBER_CHARS = 12;

/** Grammar characters that are also measure words after a number (两只猫, 一把伞, 一对耳环); "两只" alone is a stopword. */
const MEASURE_WORDS = '只把对';

/** Words starting with 不 or 没 that negate nothing ("不过" is "but", "不错" is "good"). */
const NOT_NEGATIONS = new Set('不过 不然 不仅 不但 不管 不论 不少 不久 不错 不同 不如 不断 不禁 不用谢 没事 没关系 不過 不僅 不論 不斷 沒事 沒關係'.split(' '));

/** 不, 没, 沒, 别, 別, 未, a word of two characters negating its second (不当, 没有, 不是), or one ending in a negation (从来没, 从不). */
function isNegation(word: string): boolean {
  if (NOT_NEGATIONS.has(word)) return false;
  const chars = Array.from(word);
  return (
    (chars.length === 1 && NEGATIONS.includes(word)) ||
    (chars.length === 2 && '不没沒'.includes(chars[0] as string)) ||
    (chars.length <= 3 && '不没沒'.includes(chars[chars.length - 1] as string))
  );
}

/** Characters that end a noun and join the word before them: 工程师, 计算机, 程序员, 咖啡店, 巷子. */
const NOUN_SUFFIXES = '师師机機员員家者器店馆館院园園场場厂廠站局所室子手';

/** Greetings, thanks and question words: never what a text is about. */
const GREETINGS: ReadonlySet<string> = new Set(
  '你好 您好 大家好 谢谢 謝謝 多谢 多謝 哈哈 哈哈哈 好的 嗯嗯 早上好 晚上好 晚安 再见 再見 拜拜 什么 什麼 怎么 怎麼 为什么 為什麼 可以'.split(' '),
);

export function isStopword(word: string, lower: string): boolean {
  if (CJK.test(word)) {
    const chars = Array.from(word);
    // Single characters, "一只"-style numeral + measure word ("两只"), and words ending in a particle ("养了", "我是").
    // Two characters that never join, one of them grammar ("她在", "住在", "在学"), and greetings ("你好") say nothing
    // either; two verbs make a word ("开会", "学会", "买卖").
    return (
      CHINESE_STOPWORDS.has(word) ||
      GREETINGS.has(word) ||
      chars.length < 2 ||
      (chars.length === 2 && (chars[0] === '一' || (NUMERALS.includes(chars[0] as string) && MEASURE_WORDS.includes(chars[1] as string)) || '了的着过是'.includes(chars[1] ?? '') || isGrammarPair(chars)))
    );
  }
  // Short words are kept only when they are numbers or acronyms ("AI", "3D").
  if (lower.length < 3 && !/\d/.test(lower) && !/^\p{Lu}+$/u.test(word)) return true;
  return ENGLISH_STOPWORDS.has(lower.replace(/['’]/gu, ''));
}

/** Two characters that never join, not both verbs. */
function isGrammarPair(chars: string[]): boolean {
  return chars.every((char) => NOT_JOINED.includes(char)) && !chars.every((char) => VERBS.includes(char));
}

/** isStopword for a run of ASCII letters and digits. */
function isAsciiStopword(word: string, lower: string): boolean {
  if (lower.length < 3 && !hasDigit(word) && !isUppercase(word)) return true;
  return ENGLISH_STOPWORDS.has(lower);
}

/** keywordScore for a run of ASCII letters and digits. */
function asciiKeywordScore(word: string): number {
  let score = Math.min(word.length, 10) / 10;
  const first = word.charCodeAt(0);
  if (first >= 0x41 && first <= 0x5a) score += 1;
  if (hasDigit(word)) score += 0.8;
  return score;
}

function hasDigit(word: string): boolean {
  for (let index = 0; index < word.length; index++) {
    const code = word.charCodeAt(index);
    if (code >= 0x30 && code <= 0x39) return true;
  }
  return false;
}

/** Every character A-Z (so not empty, no digit, no lowercase). */
function isUppercase(word: string): boolean {
  if (word.length === 0) return false;
  for (let index = 0; index < word.length; index++) {
    const code = word.charCodeAt(index);
    if (code < 0x41 || code > 0x5a) return false;
  }
  return true;
}

export function keywordScore(word: string): number {
  if (CJK.test(word)) return 2 + Array.from(word).length / 4;
  let score = Math.min(word.length, 10) / 10;
  if (/^\p{Lu}/u.test(word)) score += 1;
  if (/\d/.test(word)) score += 0.8;
  return score;
}
