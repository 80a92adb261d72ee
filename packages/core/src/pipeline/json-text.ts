/** The JSON object in a model's answer, or why there is none. */
export type JsonObjectResult = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/**
 * Find the one JSON object in a model's answer: the answer itself, a fenced
 * block, or the first balanced `{…}` in surrounding prose. Only an object
 * counts (not an array, a string or a number).
 */
export function parseJsonObject(text: string): JsonObjectResult {
  if (/^(?:```[a-z]*\s*)?\[/iu.test(text.trim())) return { ok: false, reason: 'the answer is a JSON array, not an object' };
  const start = text.indexOf('{');
  if (start < 0) return { ok: false, reason: 'the answer holds no JSON object' };
  const end = matchingBrace(text, start);
  if (end < 0) return { ok: false, reason: 'the JSON object in the answer is not closed' };
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end + 1));
  } catch (error) {
    return { ok: false, reason: `the answer is not valid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  // A balanced {…} that parses is always an object.
  return { ok: true, value: value as Record<string, unknown> };
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
