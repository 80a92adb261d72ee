/**
 * C0 and C1 control characters and the bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069):
 * invisible, or able to make a terminal or a log show other text than what is there (U+001B starts an escape
 * sequence, U+202E shows what follows it right to left), as the source of a regular expression (a string, so no
 * caller can change the one core checks ids with): `new RegExp(CONTROL_OR_BIDI_SOURCE, 'gu')` replaces them all.
 */
export const CONTROL_OR_BIDI_SOURCE = '[\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]';
const CONTROL_OR_BIDI = new RegExp(CONTROL_OR_BIDI_SOURCE, 'u');

/**
 * Where `text` holds a control character or a bidi control, as `U+001B at index 3` (the first one);
 * undefined when it holds none. Names the character by code point, so a message never prints it.
 */
export function controlCharacterAt(text: string): string | undefined {
  const found = CONTROL_OR_BIDI.exec(text);
  if (!found) return undefined;
  const codePoint = found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
  return `U+${codePoint} at index ${found.index}`;
}
