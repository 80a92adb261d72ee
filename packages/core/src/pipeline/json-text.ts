/** The JSON object in a model's answer, or why there is none. */
export type JsonObjectResult = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/**
 * Find the JSON object in a model's answer: in a fenced block when there is
 * one, else the first balanced `{…}` that parses, in the answer itself or
 * in surrounding prose ("Format {key: value}:" before the object is passed
 * over). A balanced `{…}` that does not parse is passed over whole, so an
 * object inside it is never taken for the answer. Only an object counts (not
 * an array, a string or a number).
 */
export function parseJsonObject(text: string): JsonObjectResult {
  if (/^(?:```[a-z]*\s*)?\[/iu.test(text.trim())) return { ok: false, reason: 'the answer is a JSON array, not an object' };
  const fenced = /```[a-z]*[ \t]*\r?\n([\s\S]*?)```/iu.exec(text);
  let problem: string | undefined;
  for (const place of fenced ? [fenced[1] as string, text] : [text]) {
    let start = place.indexOf('{');
    while (start >= 0) {
      const end = matchingBrace(place, start);
      if (end < 0) {
        problem ??= 'the JSON object in the answer is not closed';
        start = place.indexOf('{', start + 1);
        continue;
      }
      try {
        // A balanced {…} that parses is always an object.
        return { ok: true, value: JSON.parse(place.slice(start, end + 1)) as Record<string, unknown> };
      } catch (error) {
        problem ??= `the answer is not valid JSON (${error instanceof Error ? error.message : String(error)})`;
      }
      start = place.indexOf('{', end + 1);
    }
  }
  return { ok: false, reason: problem ?? 'the answer holds no JSON object' };
}

/** Index of the brace closing the one at `start`, skipping braces inside strings; -1 when unbalanced. */
function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const character = text[index];
    if (inString) {
      if (character === '\\') index++;
      else if (character === '"') inString = false;
      continue;
    }
    if (character === '"') inString = true;
    else if (character === '{') depth++;
    else if (character === '}' && --depth === 0) return index;
  }
  return -1;
}
