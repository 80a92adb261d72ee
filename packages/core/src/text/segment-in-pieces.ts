import { describeValue, MemloomError } from '../errors.js';
import { pairSafeEnd } from '../well-formed.js';

/**
 * Longest piece of text given to an `Intl.Segmenter` at once. V8 walks a
 * long string's segments in super-linear time (88,000 characters took
 * 1.5 to 3 s, 176,000 from 17 to 52 s, a megabyte minutes); piece by piece
 * the walk is linear.
 */
export const SEGMENT_PIECE_CHARS = 2000;

/**
 * `segmenter`'s segments of `text`, segmented a piece of at most
 * `pieceChars` UTF-16 units at a time, so that a long text takes linear
 * time. Each piece ends at the last place in it where no word and no
 * grapheme can continue (see `isSafeCut`), so the segments are those of a
 * single pass. Only a stretch of `pieceChars` units with no such place (a
 * long run of Chinese without punctuation, of emoji, a URL of letters and
 * dots) is cut between two code points, which can split a word or a
 * grapheme there.
 *
 * Each segment's `index` is its offset in its piece, and `input` is the
 * piece, not `text`.
 */
export function* segmentInPieces(segmenter: Intl.Segmenter, text: string, pieceChars = SEGMENT_PIECE_CHARS): Generator<Intl.SegmentData> {
  for (const piece of splitIntoPieces(text, pieceChars)) yield* segmenter.segment(piece);
}

/** The pieces `segmentInPieces` segments, in order; joined, they are `text`. */
export function splitIntoPieces(text: string, pieceChars = SEGMENT_PIECE_CHARS): string[] {
  // Two units at least, so a piece can always hold a whole UTF-16 pair.
  if (!Number.isInteger(pieceChars) || pieceChars < 2) {
    throw new MemloomError({ code: 'INVALID_INPUT', message: `segmentInPieces: pieceChars must be an integer of 2 or more, got ${describeValue(pieceChars)}` });
  }
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + pieceChars);
    if (end < text.length) {
      let cut = end;
      while (cut > start && !isSafeCut(text, cut)) cut--;
      end = cut > start ? cut : pairSafeEnd(text, end);
    }
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

/**
 * Whether Unicode's word rules (UAX #29, as ICU applies them, dictionary
 * scripts included) and grapheme rules break between `text[at - 1]` and
 * `text[at]` in every context, so a text cut there segments as it would in
 * one pass: after whitespace or punctuation that no rule joins to a word,
 * before a letter or digit that starts afresh. A test checks this against
 * single passes over many random texts. One exception is known: ICU's
 * Japanese dictionary carries a little state from a rare kana sign followed
 * by a combining mark (゠́, 〱́) to the next run of kana that begins with ー,
 * and a cut between the two loses it.
 */
export function isSafeCut(text: string, at: number): boolean {
  if (at <= 0 || at >= text.length) return false;
  const next = String.fromCodePoint(text.codePointAt(at) as number);
  if (!LETTER_OR_DIGIT.test(next) || JOINING_LETTER.test(next)) return false;
  const before = charBefore(text, at);
  if (!SPACE_OR_PUNCTUATION.test(before) || JOINED_TO_WORDS.test(before)) return false;
  // A mark that joins letters or digits on both sides (can't, 3.14) joins no Han or kana.
  return !BETWEEN_LETTERS.test(before) || HAN_OR_KANA.test(next);
}

/** After whitespace and punctuation, words usually end. */
const SPACE_OR_PUNCTUATION = /[\s\p{P}]/u;
/**
 * Whitespace and punctuation that word rules join to what follows anyway:
 * connectors and the narrow no-break space (ExtendNumLet: `snake_case`), the
 * byte order mark (a format character, skipped over), marks that are letters
 * or digits to the word rules (Armenian ՚ ՛ ՜ ՞ ֊, Hebrew ׳, Arabic ٫) or
 * letters of scripts ICU breaks by dictionary (Tai Tham, Tai Viet), and
 * Katakana's ゠ and 𖿢.
 */
const JOINED_TO_WORDS = /[\p{Pc}\u202F\uFEFF\u055A-\u055C\u055E\u058A\u05F3\u066B\u1AA0-\u1AAD\u30A0\uAADE\uAADF\u{16FE2}]/u;
/**
 * MidLetter, MidNum, MidNumLet and the quotes: joined to the letters or
 * digits on both sides (can't, 3.14, 1,000, a:b, Hebrew צה"ל, 1;1 also with
 * the Greek question mark U+037E). Chinese ，：； are among them (NFKC makes
 * them , : ;), hence the exception for Han and kana.
 */
const BETWEEN_LETTERS = /["'.,:;\u00B7\u037E\u0387\u055F\u0589\u05F4\u060C\u060D\u066C\u07F8\u2018\u2019\u2024\u2027\uFE10\uFE13\uFE14\uFE50\uFE52\uFE54\uFE55\uFF07\uFF0C\uFF0E\uFF1A\uFF1B]/u;
const HAN_OR_KANA = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
/** A letter or digit begins a new word and a new grapheme after such a place... */
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
/** ...except these four, which join the character before them (Thai and Lao AM, halfwidth kana sound marks). */
const JOINING_LETTER = /[\u0E33\u0EB3\uFF9E\uFF9F]/u;

/** The code point that ends at `at` (both halves of a UTF-16 pair). */
function charBefore(text: string, at: number): string {
  const start = at >= 2 && isLowSurrogate(text.charCodeAt(at - 1)) && isHighSurrogate(text.charCodeAt(at - 2)) ? at - 2 : at - 1;
  return text.slice(start, at);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
