import { scoreThenId } from '../score-order.js';
import { keywordTerms } from './tokenize.js';

export interface TextIndexOptions {
  /** BM25 term-frequency saturation. @default 1.2 */
  k1?: number;
  /** BM25 length normalization. @default 0.75 */
  b?: number;
}

export interface TextHit {
  id: string;
  score: number;
}

/** The smallest weight a matching term keeps: FTS5's, so that a match still scores above 0. */
const LEAST_IDF = 1e-6;

/**
 * How much a term found in `matching` of `documentCount` documents weighs: FTS5's BM25 IDF,
 * log((N − n + 0.5) / (n + 0.5)), at least 1e-6, so the in-memory and Markdown stores rank as
 * SQLite does. A term in half the documents or more weighs next to nothing: in a conversation,
 * a question's common words (make, like, photo) no longer pull in turns that only share them.
 */
function inverseDocumentFrequency(documentCount: number, matching: number): number {
  return Math.max(LEAST_IDF, Math.log((documentCount - matching + 0.5) / (matching + 0.5)));
}

/**
 * An in-process BM25 keyword index over core's `keywordTerms`. Stores without a
 * text engine of their own (in-memory, markdown's derived index) use it.
 */
export class TextIndex {
  private readonly k1: number;
  private readonly b: number;
  private readonly postings = new Map<string, Map<string, number>>();
  private readonly lengths = new Map<string, number>();
  private readonly termsOf = new Map<string, string[]>();
  private totalLength = 0;

  constructor(options: TextIndexOptions = {}) {
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
  }

  get size(): number {
    return this.lengths.size;
  }

  /** Index (or re-index) one document. */
  set(id: string, text: string): void {
    this.delete(id);
    const terms = keywordTerms(text);
    const counts = new Map<string, number>();
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    for (const [term, count] of counts) {
      let posting = this.postings.get(term);
      if (!posting) this.postings.set(term, (posting = new Map()));
      posting.set(id, count);
    }
    this.termsOf.set(id, [...counts.keys()]);
    this.lengths.set(id, terms.length);
    this.totalLength += terms.length;
  }

  delete(id: string): void {
    const terms = this.termsOf.get(id);
    if (!terms) return;
    for (const term of terms) {
      const posting = this.postings.get(term);
      posting?.delete(id);
      if (posting?.size === 0) this.postings.delete(term);
    }
    this.totalLength -= this.lengths.get(id) ?? 0;
    this.lengths.delete(id);
    this.termsOf.delete(id);
  }

  /** Best BM25 matches first; `accept` filters documents (scope, fields) before ranking. */
  search(query: string, limit: number, accept?: (id: string) => boolean): TextHit[] {
    const documentCount = this.lengths.size;
    if (documentCount === 0 || limit <= 0) return [];
    const averageLength = this.totalLength / documentCount || 1;
    const scores = new Map<string, number>();
    for (const term of new Set(keywordTerms(query))) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      const idf = inverseDocumentFrequency(documentCount, posting.size);
      for (const [id, frequency] of posting) {
        if (accept && !accept(id)) continue;
        const length = this.lengths.get(id) ?? 0;
        const norm = frequency + this.k1 * (1 - this.b + (this.b * length) / averageLength);
        scores.set(id, (scores.get(id) ?? 0) + (idf * (frequency * (this.k1 + 1))) / norm);
      }
    }
    return [...scores]
      .map(([id, score]) => ({ id, score }))
      .sort((a, b) => scoreThenId(a.score, a.id, b.score, b.id))
      .slice(0, limit);
  }
}
