/**
 * How wide text is on a terminal. A Chinese, Japanese or Korean character, and an emoji, takes two
 * columns; a control or format character (a tab, ESC, a zero-width space, a soft hyphen) none;
 * most others one. Text is cut between graphemes, so that an emoji (two UTF-16 units, or several
 * joined) or a letter with its accents is never split.
 */
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** A grapheme shown two columns wide: an emoji, or an East Asian wide or fullwidth character (Unicode's UAX #11 blocks). */
const WIDE =
  /^(?:\p{Emoji_Presentation}|[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\u{20000}-\u{3FFFD}])/u;

/** A grapheme shown in no column: control and format characters only (ESC, a tab, U+200B, U+00AD). */
const ZERO_WIDTH = /^[\p{Cc}\p{Cf}]+$/u;

function graphemeWidth(grapheme: string): number {
  if (ZERO_WIDTH.test(grapheme)) return 0;
  // U+FE0F asks for the emoji form, two columns wide: also of a keycap (1️⃣, #️⃣: a digit or sign, U+FE0F, U+20E3).
  return WIDE.test(grapheme) || grapheme.includes('\uFE0F') ? 2 : 1;
}

/** Columns `text` takes on a terminal (one line of it). */
export function displayWidth(text: string): number {
  let width = 0;
  for (const { segment } of graphemes.segment(text)) width += graphemeWidth(segment);
  return width;
}

/** `text` in at most `columns` columns: whole, or cut between graphemes and ended with "…". */
export function clipToWidth(text: string, columns: number): string {
  if (displayWidth(text) <= columns) return text;
  let kept = '';
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    const next = graphemeWidth(segment);
    if (width + next > columns - 1) break;
    kept += segment;
    width += next;
  }
  return `${kept}…`;
}
