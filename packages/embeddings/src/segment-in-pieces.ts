/**
 * Longest piece of text given to an `Intl.Segmenter` at once. V8 walks a
 * long string's segments in super-linear time (88,000 characters took
 * 1.5 s, 176,000 took 17 s, a megabyte minutes); piece by piece the walk is
 * linear.
 */
export const SEGMENT_PIECE_CHARS = 2000;

/** After whitespace, these begin a new word and a new grapheme: no segmentation rule joins them to what came before. */
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
/** The four letters that do join the character before them (Thai and Lao AM, halfwidth kana sound marks). */
const JOINING_LETTER = /[\u0E33\u0EB3\uFF9E\uFF9F]/u;
const WHITESPACE = /\s/u;
const HIGH_SURROGATE = /[\uD800-\uDBFF]/u;

/**
 * `segmenter`'s segments of `text`, segmented a piece of at most
 * `pieceChars` characters at a time. A piece ends after whitespace that a
 * letter or digit follows, where neither a word nor a grapheme can continue
 * (Unicode's word and grapheme rules join nothing across it, and look no
 * further than the whitespace), so the segments are the ones a single pass
 * gives. A stretch of `pieceChars` characters with no such place (a long
 * URL, a run of emoji, CJK text without spaces) is cut between two code
 * points: that can split a word or a grapheme there.
 *
 * The segments' `index` is their offset in their piece, not in `text`.
 */
export function* segmentInPieces(segmenter: Intl.Segmenter, text: string, pieceChars = SEGMENT_PIECE_CHARS): Generator<Intl.SegmentData> {
  for (const piece of splitIntoPieces(text, pieceChars)) yield* segmenter.segment(piece);
}

/** The pieces `segmentInPieces` segments, in order; joined, they are `text`. */
export function splitIntoPieces(text: string, pieceChars = SEGMENT_PIECE_CHARS): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + pieceChars);
    if (end < text.length) {
      let cut = end;
      while (cut > start && !isSafeCut(text, cut)) cut--;
      if (cut > start) end = cut;
      else if (HIGH_SURROGATE.test(text[end - 1] as string) && end - 1 > start) end--;
    }
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

/** Whitespace before `at`, and a letter or digit that starts afresh at `at`. */
function isSafeCut(text: string, at: number): boolean {
  if (!WHITESPACE.test(text[at - 1] as string)) return false;
  const next = String.fromCodePoint(text.codePointAt(at) as number);
  return LETTER_OR_DIGIT.test(next) && !JOINING_LETTER.test(next);
}
