/**
 * Cuts between graphemes (user-perceived characters): a flag (two regional indicators), a family
 * emoji joined by U+200D or a letter with its accents is kept whole or left out, never split. A cut
 * by UTF-16 units or by code points can leave a lone regional indicator or a dangling joiner.
 */
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** The first `count` graphemes of `text` (all of a shorter text). */
export function firstGraphemes(text: string, count: number): string {
  // A grapheme holds at least one UTF-16 unit: a text no longer than `count` units is whole.
  if (text.length <= count) return text;
  let taken = 0;
  for (const { index } of graphemes.segment(text)) {
    if (taken === count) return text.slice(0, index);
    taken++;
  }
  return text;
}

/** `text` when it has at most `max` graphemes, else its first `max - 1` graphemes and "…". */
export function clipGraphemes(text: string, max: number): string {
  if (text.length <= max) return text;
  let taken = 0;
  let cut = 0;
  for (const { index } of graphemes.segment(text)) {
    if (taken === max - 1) cut = index;
    if (taken === max) return `${text.slice(0, cut)}…`;
    taken++;
  }
  return text;
}
