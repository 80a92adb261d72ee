const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A Markdown file's bytes as text, or why they are not UTF-8, the one encoding memloom reads and writes.
 * Read as UTF-8 regardless, a file re-saved as UTF-16 would show no block at all (every memory in it taken as
 * deleted) and one saved as Windows-1252 or GBK would show U+FFFD for each accent or Chinese character (taken as edits): such a file is a
 * problem for the person to fix instead, like any file that cannot be read.
 */
export function decodeMarkdown(bytes: Uint8Array): { text: string } | { line: number; message: string } {
  // UTF-16 (or UTF-32) with a byte order mark, or without one: the NUL half of its first character.
  const utf16 = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff) || (bytes.length >= 2 && (bytes[0] === 0 || bytes[1] === 0));
  if (utf16) return { line: 1, message: 'is saved as UTF-16 ("Unicode"), and memloom reads only UTF-8: save it as UTF-8' };
  try {
    // A UTF-8 byte order mark is dropped here.
    return { text: UTF8.decode(bytes) };
  } catch {
    return { line: firstNonUtf8Line(bytes), message: 'is not valid UTF-8 (saved in another encoding, such as GBK/GB18030, Big5 or Windows-1252?): save it as UTF-8' };
  }
}

/** The 1-based line of the first bytes that are not UTF-8 (a line break, 0x0A, is never part of a UTF-8 sequence). */
function firstNonUtf8Line(bytes: Uint8Array): number {
  let line = 1;
  let start = 0;
  for (let index = 0; index <= bytes.length; index++) {
    if (index < bytes.length && bytes[index] !== 0x0a) continue;
    try {
      UTF8.decode(bytes.subarray(start, index));
    } catch {
      return line;
    }
    line++;
    start = index + 1;
  }
  return line;
}
