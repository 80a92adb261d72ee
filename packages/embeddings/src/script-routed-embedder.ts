import { MemloomError, type Embedder, type EmbedOptions } from '@memloom/core';
import { assertCombinedId, combinedQueryReading, placePart } from './combined-parts.js';
import { assertKnownOptions } from './known-options.js';
import { assertTexts } from './lexical-embedder.js';

export interface ScriptRoutedEmbedderOptions {
  /** Embeds Latin-script text (English and other space-separated languages). */
  latin: Embedder;
  /** Embeds CJK text (Chinese, Japanese, Korean). */
  cjk: Embedder;
  /** Names the vector space. @default `routed(<latin id>|<cjk id>)` */
  id?: string;
}

const CJK_CHAR = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/gu;
const LATIN_WORD = /[\p{L}\p{N}]+/gu;
/** Chinese averages about 1.7 characters a word; counting words on both sides keeps the shares fair. */
const CJK_CHARS_PER_WORD = 1.7;

/**
 * Two embedders side by side, each weighted by how much of the text is in
 * its script: `[√(1−s)·latin(text), √s·cjk(text)]`, s = the CJK share of the
 * text's words. An English text lives in the Latin part, a Chinese one in the
 * CJK part, a mixed one in both; cosine between two texts is
 * `√((1−s₁)(1−s₂))·cos_latin + √(s₁s₂)·cos_cjk`.
 *
 * Why: a model that knows no Chinese maps every Chinese sentence to nearly
 * the same vector (USE-lite does), which would make all Chinese memories
 * "similar" and merge them. Routing keeps each model on the text it can read.
 */
export function createScriptRoutedEmbedder(options: ScriptRoutedEmbedderOptions): Embedder {
  const { latin, cjk } = options ?? ({} as ScriptRoutedEmbedderOptions);
  if (!latin || typeof latin.embed !== 'function' || !cjk || typeof cjk.embed !== 'function') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: 'script-routed embedder needs a latin and a cjk embedder' });
  }
  assertKnownOptions(options, { latin: true, cjk: true, id: true } satisfies Record<keyof ScriptRoutedEmbedderOptions, true>, 'createScriptRoutedEmbedder');
  assertCombinedId(options.id, 'script-routed embedder');
  const dimension = latin.dimension + cjk.dimension;
  const id = options.id ?? `routed(${latin.id}|${cjk.id})`;
  const queryReading = combinedQueryReading([latin, cjk]);

  return {
    id,
    dimension,
    ...(queryReading !== undefined ? { queryReading } : {}),
    async embed(texts: readonly string[], embedOptions?: EmbedOptions): Promise<number[][]> {
      assertTexts(texts, id);
      if (texts.length === 0) return [];
      const shares = texts.map(cjkShare);
      // Each model sees only the texts it contributes to.
      const latinRows = shares.flatMap((share, index) => (share < 1 ? [index] : []));
      const cjkRows = shares.flatMap((share, index) => (share > 0 ? [index] : []));
      const [latinVectors, cjkVectors] = await Promise.all([
        latinRows.length ? latin.embed(latinRows.map((index) => texts[index] as string), embedOptions) : Promise.resolve([]),
        cjkRows.length ? cjk.embed(cjkRows.map((index) => texts[index] as string), embedOptions) : Promise.resolve([]),
      ]);
      const latinByRow = new Map(latinRows.map((row, at) => [row, latinVectors[at]]));
      const cjkByRow = new Map(cjkRows.map((row, at) => [row, cjkVectors[at]]));
      return shares.map((share, row) => {
        const vector = new Array<number>(dimension).fill(0);
        placePart(vector, 0, latinByRow.get(row), latin, Math.sqrt(1 - share));
        placePart(vector, latin.dimension, cjkByRow.get(row), cjk, Math.sqrt(share));
        return vector;
      });
    },
    async close() {
      await Promise.all([latin.close?.(), cjk.close?.()]);
    },
  };
}

/** Share of the text's words that are CJK, 0..1 (0 for text with no words at all). */
export function cjkShare(text: string): number {
  const cjkChars = text.match(CJK_CHAR)?.length ?? 0;
  if (cjkChars === 0) return 0;
  let latinWords = 0;
  for (const match of text.replace(CJK_CHAR, ' ').matchAll(LATIN_WORD)) if (match[0]) latinWords++;
  const cjkWords = cjkChars / CJK_CHARS_PER_WORD;
  return cjkWords / (cjkWords + latinWords);
}

