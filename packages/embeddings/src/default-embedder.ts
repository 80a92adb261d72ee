import { CHINESE_DISCOURSE_VERSION, describeValue, MemloomError, TOKENIZER_VERSION, withoutChineseDiscourse, type Embedder, type EmbedOptions } from '@memloom/core';
import { assertCacheSize, assertPersistentLevel, createCachedEmbedder, type CachedEmbedder, type PersistentEmbeddingCache } from './cached-embedder.js';
import { assertKnownOptions } from './known-options.js';
import { assertTexts, DEFAULT_CHAR_NGRAM_SIZE, DEFAULT_CHAR_WEIGHT, LEXICAL_OPTION_KEYS, LEXICAL_VERSION, lexicalVector, resolveLexicalSettings, type LexicalEmbedderOptions, type LexicalEmbedderSettings } from './lexical-embedder.js';
import { WORD_VECTOR_EMBEDDER_ID, wordVectorOf } from './word-vector-embedder.js';

export interface DefaultEmbedderOptions {
  /**
   * Vectors kept in memory so the same text is never embedded twice; 0 turns
   * the in-memory cache off.
   * @default 10000
   */
  cacheEntries?: number;
  /** A lasting second cache level, e.g. one a store provides. */
  persistentCache?: PersistentEmbeddingCache;
}

export interface OfflineEmbedderOptions {
  /**
   * Share of the cosine that comes from the word vectors (meaning); the rest
   * comes from the hashed lexical features (the same words). The lexical share
   * keeps unrelated texts apart, so memloom's merge threshold (0.85) means
   * "nearly the same text", not "about the same kind of thing".
   * @default 0.8
   */
  semanticWeight?: number;
  /**
   * Buckets of the lexical part: words and character n-grams. More buckets
   * mean fewer hash collisions but longer vectors to store and scan; on
   * LoCoMo and the Chinese sets 256 + 128 ranks like 768 + 256 (package README).
   * @default { wordDimension: 256, charDimension: 128 }
   */
  lexical?: Pick<LexicalEmbedderOptions, 'wordDimension' | 'charDimension'>;
}

const DEFAULT_LEXICAL = { wordDimension: 256, charDimension: 128 } as const;
const WORD_DIMENSION = 100;

/**
 * The offline default: what memloom uses when no embedder is configured.
 * No network, no model, no download: static word vectors (GloVe for English,
 * CC-CEDICT glosses into the same space for Chinese) beside hashed lexical
 * features, microseconds per text, wrapped in an embedding cache. Chosen by
 * measurement: see the package README.
 */
export function createDefaultEmbedder(options: DefaultEmbedderOptions = {}): CachedEmbedder {
  if (options === null || typeof options !== 'object') throw invalid('default', `options must be an object, got ${describeValue(options)}`);
  assertKnownOptions(options, { cacheEntries: true, persistentCache: true } satisfies Record<keyof DefaultEmbedderOptions, true>, 'createDefaultEmbedder');
  // Checked here, so the error names this factory's options rather than the cache's.
  const cacheEntries = options.cacheEntries ?? 10_000;
  assertCacheSize(cacheEntries, 'default embedder: cacheEntries');
  assertPersistentLevel(options.persistentCache, 'default embedder: persistentCache');
  return createCachedEmbedder(createOfflineEmbedder(), {
    maxEntries: cacheEntries,
    // A query is read without its Chinese discourse words (createOfflineEmbedder's
    // queryReading), so a query and a document of the same text are cached apart.
    sharePurposes: false,
    ...(options.persistentCache ? { persistent: options.persistentCache } : {}),
  });
}

/**
 * The default's vector space without the cache (484 dimensions):
 * `[√w·words(text), √(1−w)·lexical(text)]`, so the cosine of two texts is
 * `w·cos_words + (1−w)·cos_lexical`. A text with no known word (emoji,
 * Japanese, Korean, unknown names only) has only the lexical part.
 *
 * A query (`purpose: 'query'`) is embedded without its Chinese discourse
 * words (core's `withoutChineseDiscourse`): in `对了，他家在哪里？你还记得吗？`
 * only `他家在哪里` is read, as the bare question is, instead of an average
 * diluted by "right", "remember" and "still". Documents are read whole, so
 * stored vectors stay valid. `queryReading` (`zh-discourse-<version>`) names
 * that reading, so a cache keys query vectors apart from documents and from
 * an older reading's.
 */
export function createOfflineEmbedder(options: OfflineEmbedderOptions = {}): Embedder {
  if (options === null || typeof options !== 'object') throw invalid('offline', `options must be an object, got ${describeValue(options)}`);
  assertKnownOptions(options, { semanticWeight: true, lexical: true } satisfies Record<keyof OfflineEmbedderOptions, true>, 'createOfflineEmbedder');
  const semanticWeight = options.semanticWeight ?? 0.8;
  if (typeof semanticWeight !== 'number' || !(semanticWeight > 0 && semanticWeight < 1)) {
    throw invalid('offline', `semanticWeight must be a number between 0 and 1 (exclusive), got ${describeValue(options.semanticWeight)}`);
  }
  if (options.lexical !== undefined && (options.lexical === null || typeof options.lexical !== 'object' || Array.isArray(options.lexical))) {
    throw invalid('offline', `lexical must be an object, got ${describeValue(options.lexical)}`);
  }
  // Every lexical setting is accepted from JavaScript (the id names those that differ from the default).
  assertKnownOptions(options.lexical ?? {}, LEXICAL_OPTION_KEYS, 'createOfflineEmbedder', 'lexical.');
  // A setting given as undefined keeps this embedder's default, not the lexical embedder's.
  const lexical = Object.fromEntries(Object.entries(options.lexical ?? {}).filter(([, value]) => value !== undefined));
  const lexicalSettings = resolveLexicalSettings({ ...DEFAULT_LEXICAL, ...lexical });
  const lexicalDimension = lexicalSettings.wordDimension + lexicalSettings.charDimension;
  const lexicalId = offlineLexicalId(lexicalSettings);
  const id = `memloom/offline-v3(${WORD_VECTOR_EMBEDDER_ID}*${semanticWeight}+${lexicalId}*${Math.round((1 - semanticWeight) * 1e6) / 1e6})`;
  const wordScale = Math.sqrt(semanticWeight);
  const lexicalScale = Math.sqrt(1 - semanticWeight);
  const dimension = WORD_DIMENSION + lexicalDimension;
  return {
    id,
    dimension,
    queryReading: `zh-discourse-${CHINESE_DISCOURSE_VERSION}`,
    async embed(texts: readonly string[], embedOptions?: EmbedOptions): Promise<number[][]> {
      assertTexts(texts, id);
      const read = embedOptions?.purpose === 'query' ? withoutChineseDiscourse : (text: string) => text;
      return texts.map((original) => {
        const text = read(original);
        const vector = new Array<number>(dimension).fill(0);
        const words = wordVectorOf(text);
        const lexical = lexicalVector(text, lexicalSettings);
        const scale = words ? lexicalScale : 1;
        if (words) for (let at = 0; at < WORD_DIMENSION; at++) vector[at] = (words[at] as number) * wordScale;
        for (let at = 0; at < lexicalDimension; at++) vector[WORD_DIMENSION + at] = (lexical[at] as number) * scale;
        return vector;
      });
    },
  };
}

/**
 * Names the lexical part in the offline id. The typed options are the two
 * bucket counts, but JavaScript callers can pass any lexical setting, and
 * each one changes the vectors: a setting that differs from the default is
 * named too (`x<n-gram size>`, `@<char weight>`, as the lexical embedder's
 * id does), so the default configuration's id stays as it was.
 */
function offlineLexicalId(settings: LexicalEmbedderSettings): string {
  let id = `lexical-v${LEXICAL_VERSION}:t${TOKENIZER_VERSION}:w${settings.wordDimension}:c${settings.charDimension}`;
  if (settings.charNgramSize !== DEFAULT_CHAR_NGRAM_SIZE) id += `x${settings.charNgramSize}`;
  if (settings.charWeight !== DEFAULT_CHAR_WEIGHT) id += `@${settings.charWeight}`;
  return id;
}

function invalid(embedder: 'default' | 'offline', message: string): MemloomError {
  return new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: `${embedder} embedder: ${message}` });
}
