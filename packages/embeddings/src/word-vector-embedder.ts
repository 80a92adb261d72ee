import { CHINESE_STOPWORDS, ENGLISH_STOPWORDS, segmentInPieces, type Embedder, type EmbedOptions } from '@memloom/core';
import { fnv1a } from './hashing.js';
import { assertTexts } from './lexical-embedder.js';
import { loadGlosses, loadWordVectors, type GlossTable, type WordVectorTable } from './word-vector-table.js';

/**
 * Names the vector space: the data files' version and how text is read.
 * v2: long texts are split into words piece by piece (`segmentInPieces`),
 * which reads a stretch of 2,000 characters without whitespace otherwise.
 * v3: the pieces are core's, cut also after punctuation that ends a word, so
 * a long stretch without whitespace (a path, a URL) is no longer cut inside
 * a word, and never after a narrow no-break space, which words span.
 * v4: CC-CEDICT's traditional headwords are glossed too, and the traditional
 * forms of the Chinese stopwords and question words (們, 這個, 什麼) are
 * skipped as the simplified ones are, so 我在銀行工作 reads as 我在银行工作.
 */
export const WORD_VECTOR_EMBEDDER_ID = 'memloom/word-vectors-v4:glove100d-50k-sif-abtt2+cedict';

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/u;
const HAN_RUN = /[\u3400-\u4dbf\u4e00-\u9fff]+/gu;
const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
/** Longest Chinese headword the gloss table holds. */
const MAX_HEADWORD = 4;
/**
 * Question words carry no topic (like English "what", "where", which are
 * stopwords): 什么 would otherwise read as "something, anything".
 */
const CHINESE_QUESTION_WORDS: ReadonlySet<string> = new Set(
  '什么 啥 哪 哪里 哪儿 哪个 哪些 哪位 谁 怎样 怎么 怎么样 如何 为什么 为何 多少 几 是否 有没有 是不是 有什么 干什么'.split(' '),
);
/**
 * The traditional forms of the characters of those words and of core's
 * Chinese stopwords, each before its simplified form (們 → 们, 麼 → 么). 著 is
 * the particle 着 only when no headword holds it (著名, 著作 are words).
 */
const TRADITIONAL_FUNCTION_CHARS = '們们 與与 著着 個个 這这 沒没 嗎吗 讓让 給给 對对 從从 為为 爲为 於于 現现 經经 還还 會会 麼么 麽么 裡里 裏里 兒儿 誰谁 樣样 幾几 幹干 妳你 牠它 纔才';
/** Stopwords and question words in every spelling, simplified and traditional: 我們, 這個 and 什麼 add nothing, like 我们, 这个 and 什么. */
const FUNCTION_WORDS: ReadonlySet<string> = (() => {
  const spellingsOf = new Map<string, string[]>();
  for (const [traditional, simplified] of TRADITIONAL_FUNCTION_CHARS.split(' ').map((pair) => Array.from(pair) as [string, string])) {
    spellingsOf.set(simplified, [...(spellingsOf.get(simplified) ?? [simplified]), traditional]);
  }
  const words = new Set<string>();
  for (const word of [...CHINESE_STOPWORDS, ...CHINESE_QUESTION_WORDS]) {
    let spellings = [''];
    for (const char of word) spellings = spellings.flatMap((start) => (spellingsOf.get(char) ?? [char]).map((spelling) => start + spelling));
    for (const spelling of spellings) words.add(spelling);
  }
  return words;
})();

/**
 * Static word vectors, averaged: microseconds per text, no model, nothing to
 * download (about 6.5 MB of data inside this package).
 *
 * - English: GloVe (6B tokens, 100 dims) for the 50,000 most frequent words
 *   without stopwords, post-processed (mean and 2 top components removed)
 *   and weighted by SIF (a / (a + p(word))), so rare words count more.
 * - Chinese: words, found by forward maximum matching on CC-CEDICT's
 *   headwords, simplified and traditional (up to 4 characters; a character
 *   alone when no longer word fits), are given the vectors of their English
 *   glosses from CC-CEDICT, so 孩子 / 女儿 (child / daughter), 宠物 / 猫
 *   (pet / cat) and an English query about a Chinese memory land near each
 *   other.
 *
 * A text with no known word gets a direction hashed from its text, so two
 * such texts do not look alike unless they are the same.
 */
export function createWordVectorEmbedder(): Embedder {
  return {
    id: WORD_VECTOR_EMBEDDER_ID,
    dimension: 100,
    async embed(texts: readonly string[], _options?: EmbedOptions): Promise<number[][]> {
      assertTexts(texts, WORD_VECTOR_EMBEDDER_ID);
      return texts.map((text) => Array.from(wordVectorOf(text) ?? hashedDirection(text, 100)));
    },
  };
}

/**
 * The unit word-vector average of a text, or undefined when it holds no word
 * the tables know (empty, punctuation, emoji, unknown names, Japanese, Korean).
 */
export function wordVectorOf(text: string): Float64Array | undefined {
  const table = loadWordVectors();
  const sum = new Float64Array(table.dimension);
  const normalized = text.normalize('NFKC').toLowerCase();
  let found = false;
  if (HAN_RUN.test(normalized)) {
    HAN_RUN.lastIndex = 0;
    const glosses = loadGlosses();
    for (const match of normalized.matchAll(HAN_RUN)) found = addChineseRun(match[0], table, glosses, sum) || found;
  }
  for (const part of segmentInPieces(segmenter, normalized.replace(HAN_RUN, ' '))) {
    if (!part.isWordLike) continue;
    const word = part.segment;
    if (CJK.test(word)) continue;
    const index = englishIndex(word, table);
    if (index !== undefined) {
      addWord(table, index, 1, sum);
      found = true;
    }
  }
  if (!found) return undefined;
  let norm = 0;
  for (const value of sum) norm += value * value;
  if (!(norm > 0)) return undefined;
  const scale = 1 / Math.sqrt(norm);
  for (let at = 0; at < sum.length; at++) sum[at] = (sum[at] as number) * scale;
  return sum;
}

function englishIndex(word: string, table: WordVectorTable): number | undefined {
  const bare = word.replace(/['’]s$/u, '');
  const plain = bare.replace(/['’]/gu, '');
  if (!plain || ENGLISH_STOPWORDS.has(plain)) return undefined;
  return table.indexOf.get(bare.replace(/’/gu, "'")) ?? table.indexOf.get(plain) ?? table.indexOf.get(bare.replace(/['’].*$/u, ''));
}

/**
 * A run of Han characters, split into words by forward maximum matching on
 * the gloss table's headwords (a character alone when no longer word fits);
 * stopwords and question words add nothing.
 */
function addChineseRun(run: string, table: WordVectorTable, glosses: GlossTable, sum: Float64Array): boolean {
  const chars = Array.from(run);
  let found = false;
  for (let start = 0; start < chars.length; ) {
    let length = Math.min(MAX_HEADWORD, chars.length - start);
    let word = chars.slice(start, start + length).join('');
    while (length > 1 && !glosses.linksOf.has(word) && !FUNCTION_WORDS.has(word)) {
      length--;
      word = chars.slice(start, start + length).join('');
    }
    start += length;
    if (FUNCTION_WORDS.has(word)) continue;
    found = addGlosses(word, table, glosses, sum) || found;
  }
  return found;
}

/** Adds the mean of a headword's gloss vectors, senses weighted 1, 1/2, 1/3. */
function addGlosses(headword: string, table: WordVectorTable, glosses: GlossTable, sum: Float64Array): boolean {
  const entry = glosses.linksOf.get(headword);
  if (!entry) return false;
  const [first, count] = entry;
  let total = 0;
  for (let at = first; at < first + count; at++) total += 1 / (((glosses.links[at] as number) >>> 24) + 1);
  for (let at = first; at < first + count; at++) {
    const link = glosses.links[at] as number;
    addWord(table, link & 0xffffff, 1 / ((link >>> 24) + 1) / total, sum);
  }
  return count > 0;
}

function addWord(table: WordVectorTable, index: number, weight: number, sum: Float64Array): void {
  const { dimension, values } = table;
  const scale = (table.scales[index] as number) * weight;
  const start = index * dimension;
  for (let at = 0; at < dimension; at++) sum[at] = (sum[at] as number) + (values[start + at] as number) * scale;
}

/** A unit vector that depends only on the text: unrelated texts are nearly orthogonal, equal texts equal. */
export function hashedDirection(text: string, dimension: number): Float64Array {
  const vector = new Float64Array(dimension);
  let state = fnv1a(text.normalize('NFKC').toLowerCase()) || 1;
  let norm = 0;
  for (let at = 0; at < dimension; at++) {
    // xorshift32
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    const value = state / 0xffffffff - 0.5;
    vector[at] = value;
    norm += value * value;
  }
  const scale = 1 / Math.sqrt(norm);
  for (let at = 0; at < dimension; at++) vector[at] = (vector[at] as number) * scale;
  return vector;
}
