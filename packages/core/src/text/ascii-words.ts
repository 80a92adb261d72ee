/**
 * The word-like segments `Intl.Segmenter` (word granularity) finds in
 * `text`, computed without it when the text is plain ASCII of the kind
 * where that is easy to decide; undefined otherwise, and the caller
 * segments as before. The segmenter costs tens of microseconds per short
 * text, most of the time spent tokenizing.
 *
 * In ASCII, a word-like segment (UAX #29) is a run of letters and digits,
 * except that `_` joins anything next to it and `.` `,` `;` `:` `'` may join
 * the letters or digits on both sides ("e.g", "3.14", "can't", "a:b"). Texts
 * with any `_`, or with one of those marks between two letters or digits,
 * or with any character beyond ASCII, are left to the segmenter. A test
 * compares both on a varied corpus and on random ASCII.
 */
export function plainAsciiWords(text: string): string[] | undefined {
  const words: string[] = [];
  let start = -1;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (isAlphanumeric(code)) {
      if (start < 0) start = index;
      continue;
    }
    if (code > 0x7f || code === UNDERSCORE) return undefined;
    if (start >= 0) {
      if (JOINERS.has(code) && isAlphanumeric(text.charCodeAt(index + 1))) return undefined;
      words.push(text.slice(start, index));
      start = -1;
    }
  }
  if (start >= 0) words.push(text.slice(start));
  return words;
}

const UNDERSCORE = 0x5f;

/** MidLetter, MidNum, MidNumLet and Single_Quote in ASCII: `'` `,` `.` `:` `;`. */
const JOINERS = new Set([0x27, 0x2c, 0x2e, 0x3a, 0x3b]);

function isAlphanumeric(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39);
}
