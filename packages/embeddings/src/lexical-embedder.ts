import { describeValue, MemloomError, segmentInPieces, tokenize, TOKENIZER_VERSION, type Embedder, type EmbedOptions } from '@memloom/core';
import { addHashedFeature, normalizeRange } from './hashing.js';
import { assertKnownOptions } from './known-options.js';

export interface LexicalEmbedderOptions {
  /**
   * Buckets for whole-word features: core's `tokenize` terms (stemmed English
   * words without stopwords, CJK characters and character bigrams).
   * @default 768
   */
  wordDimension?: number;
  /**
   * Buckets for character n-grams of Latin words, which match spelling
   * variants and word parts that stemming misses (`photo` / `photography`).
   * 0 turns the channel off.
   * @default 256
   */
  charDimension?: number;
  /** Length of the character n-grams. @default 3 */
  charNgramSize?: number;
  /**
   * Share of the similarity that comes from character n-grams, from 0 up to
   * but not including 1; the rest comes from whole words. The n-grams come
   * from Latin-script words only, so near 1 a mixed text's CJK words count
   * for little beside one shared English word. Ignored when `charDimension` is 0.
   * @default 0.3
   */
  charWeight?: number;
}

/** What the options resolve to; also what names the vector space in `id`. */
export interface LexicalEmbedderSettings {
  wordDimension: number;
  charDimension: number;
  charNgramSize: number;
  charWeight: number;
}

/**
 * The lexical vector space's version, named in ids (the offline default's
 * too) beside the settings. 2: a text with no term and no character n-gram
 * (emoji, punctuation, stopwords only) has features of its own instead of
 * one direction shared by all such texts.
 */
export const LEXICAL_VERSION = 2;
/** Used for a text with nothing to hash (empty or blank) so every vector has unit length. */
const EMPTY_FEATURE = '\u0000empty';
const LATIN_WORD = /[\p{L}\p{N}]+/gu;
const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u;
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/u;
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * A hashed bag-of-words embedder: no model, no download, microseconds per
 * text. Cosine between two vectors approximates the overlap of their terms
 * (with sublinear term frequency), plus a character n-gram channel for fuzzy
 * matches. English and CJK alike, through core's shared tokenizer.
 */
/** The lexical embedder's options, for the check of unknown keys (here and in the offline embedder's `lexical`). */
export const LEXICAL_OPTION_KEYS = { wordDimension: true, charDimension: true, charNgramSize: true, charWeight: true } satisfies Record<keyof LexicalEmbedderOptions, true>;

export function createLexicalEmbedder(options: LexicalEmbedderOptions = {}): Embedder {
  if (options !== null && typeof options === 'object') {
    assertKnownOptions(options, LEXICAL_OPTION_KEYS, 'createLexicalEmbedder');
  }
  const settings = resolveLexicalSettings(options);
  const { wordDimension, charDimension, charNgramSize, charWeight } = settings;
  const dimension = wordDimension + charDimension;
  const id = `memloom/lexical-v${LEXICAL_VERSION}:t${TOKENIZER_VERSION}:w${wordDimension}:c${charDimension}x${charNgramSize}@${charWeight}`;
  return {
    id,
    dimension,
    async embed(texts: readonly string[], _options?: EmbedOptions): Promise<number[][]> {
      assertTexts(texts, id);
      return texts.map((text) => Array.from(lexicalVector(text, settings)));
    },
  };
}

/** One text's lexical vector (unit length). Exposed for composite embedders. */
export function lexicalVector(text: string, settings: LexicalEmbedderSettings): Float64Array {
  const { wordDimension, charDimension, charNgramSize } = settings;
  const charWeight = charDimension > 0 ? settings.charWeight : 0;
  const vector = new Float64Array(wordDimension + charDimension);

  const counts = new Map<string, number>();
  for (const term of tokenize(text)) counts.set(term, (counts.get(term) ?? 0) + 1);
  for (const [term, count] of counts) addHashedFeature(vector, 0, wordDimension, term, 1 + Math.log(count));
  const hasWords = normalizeRange(vector, 0, wordDimension, Math.sqrt(1 - charWeight));

  let hasChars = false;
  if (charWeight > 0) {
    const grams = new Map<string, number>();
    for (const word of latinWords(text)) {
      const padded = `<${word}>`;
      if (padded.length <= charNgramSize) {
        grams.set(padded, (grams.get(padded) ?? 0) + 1);
        continue;
      }
      for (let start = 0; start + charNgramSize <= padded.length; start++) {
        const gram = padded.slice(start, start + charNgramSize);
        grams.set(gram, (grams.get(gram) ?? 0) + 1);
      }
    }
    for (const [gram, count] of grams) addHashedFeature(vector, wordDimension, charDimension, gram, 1 + Math.log(count));
    hasChars = normalizeRange(vector, wordDimension, charDimension, Math.sqrt(charWeight));
  }

  if (!hasWords && !hasChars) {
    // Only stopwords, emoji or punctuation: those are its features, so '🎉' and '🐶' (or 'It is' and 'I am') stay apart.
    const features = new Map<string, number>();
    for (const feature of featurelessTextFeatures(text)) features.set(feature, (features.get(feature) ?? 0) + 1);
    for (const [feature, count] of features) addHashedFeature(vector, 0, wordDimension, feature, 1 + Math.log(count));
    // Nothing at all (empty or blank): a fixed direction, so the vector still has unit length.
    if (!normalizeRange(vector, 0, wordDimension)) {
      addHashedFeature(vector, 0, wordDimension, EMPTY_FEATURE, 1);
      normalizeRange(vector, 0, wordDimension);
    }
    return vector;
  }
  if (hasWords !== hasChars) normalizeRange(vector, 0, vector.length);
  return vector;
}

/** The character n-gram size and weight `resolveLexicalSettings` fills in when none is given. */
export const DEFAULT_CHAR_NGRAM_SIZE = 3;
export const DEFAULT_CHAR_WEIGHT = 0.3;

/** Validate options and fill in defaults. */
export function resolveLexicalSettings(options: LexicalEmbedderOptions): LexicalEmbedderSettings {
  if (options === null || typeof options !== 'object') {
    throw invalid('options must be an object');
  }
  const settings: LexicalEmbedderSettings = {
    wordDimension: options.wordDimension ?? 768,
    charDimension: options.charDimension ?? 256,
    charNgramSize: options.charNgramSize ?? DEFAULT_CHAR_NGRAM_SIZE,
    charWeight: options.charWeight ?? DEFAULT_CHAR_WEIGHT,
  };
  if (!Number.isInteger(settings.wordDimension) || settings.wordDimension < 8 || settings.wordDimension > 65_536) {
    throw invalid(`wordDimension must be an integer from 8 to 65536, got ${describeValue(options.wordDimension)}`);
  }
  if (!Number.isInteger(settings.charDimension) || settings.charDimension < 0 || settings.charDimension > 65_536) {
    throw invalid(`charDimension must be an integer from 0 to 65536, got ${describeValue(options.charDimension)}`);
  }
  if (!Number.isInteger(settings.charNgramSize) || settings.charNgramSize < 2 || settings.charNgramSize > 6) {
    throw invalid(`charNgramSize must be an integer from 2 to 6, got ${describeValue(options.charNgramSize)}`);
  }
  if (typeof settings.charWeight !== 'number' || !(settings.charWeight >= 0 && settings.charWeight < 1)) {
    throw invalid(`charWeight must be a number in [0, 1), got ${describeValue(options.charWeight)}`);
  }
  return settings;
}

/**
 * Features for a text that has no term and no n-gram: its words with the
 * stopwords kept, and each grapheme that is neither a letter, a digit nor
 * whitespace (an emoji, a symbol, punctuation).
 */
function featurelessTextFeatures(text: string): string[] {
  const features = tokenize(text, { stopwords: false });
  for (const { segment } of segmentInPieces(graphemes, text.normalize('NFKC'))) {
    const grapheme = segment.trim();
    if (grapheme !== '' && !LETTER_OR_NUMBER.test(grapheme)) features.push(grapheme);
  }
  return features;
}

/** Lowercased Latin (non-CJK) words of three letters or more, NFKC-normalized. */
function latinWords(text: string): string[] {
  const words: string[] = [];
  for (const match of text.normalize('NFKC').toLowerCase().matchAll(LATIN_WORD)) {
    const word = match[0];
    if (word.length >= 3 && !CJK.test(word)) words.push(word);
  }
  return words;
}

/** Texts must be an array of strings; anything else is the caller's bug, reported as such. */
export function assertTexts(texts: unknown, embedderId: string): asserts texts is readonly string[] {
  if (!Array.isArray(texts)) {
    throw new MemloomError({
      code: 'INVALID_INPUT',
      backend: 'embeddings',
      message: `${embedderId}: embed() takes an array of strings, got ${typeof texts}`,
    });
  }
  for (let index = 0; index < texts.length; index++) {
    if (typeof texts[index] !== 'string') {
      throw new MemloomError({
        code: 'INVALID_INPUT',
        backend: 'embeddings',
        message: `${embedderId}: text ${index} is a ${typeof texts[index]}, not a string`,
        details: { index },
      });
    }
  }
}

function invalid(message: string): MemloomError {
  return new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: `lexical embedder: ${message}` });
}
