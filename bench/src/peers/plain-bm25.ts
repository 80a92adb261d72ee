/**
 * Textbook Okapi BM25 (Robertson & Zaragoza 2009), the floor of the LoCoMo
 * comparison: text lowercased and split on anything that is not a letter or
 * digit, NLTK's English stopword list removed, no stemming, k1 1.2, b 0.75
 * and the non-negative IDF ln(1 + (N - n + 0.5) / (n + 0.5)) that Lucene
 * uses. This is the "plain BM25" of issue 10 (0.58 recall@10 on the LoCoMo
 * dev split). memloom's own text channel (core's TextIndex) is BM25 too, over
 * core's tokenizer (a longer stopword list, Porter stems, CJK bigrams); the
 * bench shows both, labelled.
 */
import { turnText, type LocomoRetriever } from '../locomo.js';

/** NLTK's English stopwords (179 words); split on non-letters, "don't" gives "don" and "t", both listed. */
export const NLTK_ENGLISH_STOPWORDS: ReadonlySet<string> = new Set(
  (
    "i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him his " +
    "himself she she's her hers herself it it's its itself they them their theirs themselves what which who whom this " +
    "that that'll these those am is are was were be been being have has had having do does did doing a an the and but " +
    'if or because as until while of at by for with about against between into through during before after above below ' +
    'to from up down in out on off over under again further then once here there when where why how all any both each ' +
    "few more most other some such no nor not only own same so than too very s t can will just don don't should " +
    "should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't " +
    "haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't " +
    "weren weren't won won't wouldn wouldn't"
  ).split(' '),
);

export interface PlainBm25Options {
  /** Term-frequency saturation. @default 1.2 */
  k1?: number;
  /** Length normalization. @default 0.75 */
  b?: number;
  /** Words left out of documents and queries. @default NLTK_ENGLISH_STOPWORDS */
  stopwords?: ReadonlySet<string>;
}

/** Lowercased runs of letters and digits, stopwords left out: the split of textbook examples. */
export function plainTokens(text: string, stopwords: ReadonlySet<string> = NLTK_ENGLISH_STOPWORDS): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((token) => !stopwords.has(token));
}

/** An in-memory BM25 index over plain tokens; ids are returned best first, ties by insertion order. */
export class PlainBm25 {
  private readonly k1: number;
  private readonly b: number;
  private readonly stopwords: ReadonlySet<string>;
  private readonly documents: { id: string; length: number; counts: Map<string, number> }[] = [];
  private readonly documentFrequency = new Map<string, number>();
  private totalLength = 0;

  constructor(options: PlainBm25Options = {}) {
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
    this.stopwords = options.stopwords ?? NLTK_ENGLISH_STOPWORDS;
  }

  get size(): number {
    return this.documents.length;
  }

  add(id: string, text: string): void {
    const tokens = plainTokens(text, this.stopwords);
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    for (const term of counts.keys()) this.documentFrequency.set(term, (this.documentFrequency.get(term) ?? 0) + 1);
    this.documents.push({ id, length: tokens.length, counts });
    this.totalLength += tokens.length;
  }

  search(query: string, limit: number): { id: string; score: number }[] {
    const count = this.documents.length;
    if (count === 0 || limit <= 0) return [];
    const averageLength = this.totalLength / count || 1;
    const terms = [...new Set(plainTokens(query, this.stopwords))];
    const idf = new Map(terms.map((term) => {
      const frequency = this.documentFrequency.get(term) ?? 0;
      return [term, Math.log(1 + (count - frequency + 0.5) / (frequency + 0.5))] as const;
    }));
    const scored: { id: string; score: number; order: number }[] = [];
    for (const [order, document] of this.documents.entries()) {
      let score = 0;
      for (const term of terms) {
        const frequency = document.counts.get(term);
        if (!frequency) continue;
        const norm = frequency + this.k1 * (1 - this.b + (this.b * document.length) / averageLength);
        score += ((idf.get(term) as number) * frequency * (this.k1 + 1)) / norm;
      }
      if (score > 0) scored.push({ id: document.id, score, order });
    }
    scored.sort((a, b) => b.score - a.score || a.order - b.order);
    return scored.slice(0, limit).map(({ id, score }) => ({ id, score }));
  }
}

/** Plain BM25 over every turn's text, one document per turn (no merging). */
export function createPlainBm25Retriever(options: PlainBm25Options = {}): LocomoRetriever {
  const index = new PlainBm25(options);
  return {
    async ingest(turns) {
      for (const turn of turns) index.add(turn.diaId, turnText(turn));
    },
    async search(question, k) {
      return index.search(question, k).map((hit) => [hit.id]);
    },
    async size() {
      return index.size;
    },
  };
}
