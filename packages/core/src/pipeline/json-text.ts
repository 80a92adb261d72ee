/** The JSON object in a model's answer, or why there is none. */
export type JsonObjectResult = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/** Characters of an answer searched for its object at most; a longer answer is refused. */
export const MAX_JSON_ANSWER = 1_000_000;

/**
 * Find the JSON object in a model's answer: in a fenced block when there is
 * one, else in the answer itself, prose around it allowed ("Format {key:
 * value}:" before the object is passed over: a balanced `{…}` that does not
 * parse is skipped whole, so an object inside it is never taken). Refused:
 * - an object that is never closed (an answer cut off): what is inside it is
 *   never taken for the answer;
 * - two or more objects that parse: a quoted one ("The user pasted
 *   {"retrieve_limit": 100}…") cannot be told from the answer, so neither is used;
 * - an answer that is a JSON array, a string or a number, and one longer than
 *   `MAX_JSON_ANSWER` characters.
 */
export function parseJsonObject(text: string): JsonObjectResult {
  if (text.length > MAX_JSON_ANSWER) return { ok: false, reason: `the answer is longer than ${MAX_JSON_ANSWER} characters` };
  const fenced = /```[a-z]*[ \t]*\r?\n([\s\S]*?)```/iu.exec(text);
  if (isJsonArray(fenced?.[1] ?? text)) return { ok: false, reason: 'the answer is a JSON array, not an object' };
  let problem: string | undefined;
  for (const place of fenced ? [fenced[1] as string, text] : [text]) {
    const found = objectsIn(place);
    if (found.unclosed) return { ok: false, reason: 'the JSON object in the answer is not closed' };
    if (found.objects.length > 1) return { ok: false, reason: `the answer holds ${found.objects.length} JSON objects, not one` };
    const [value] = found.objects;
    if (value) return { ok: true, value };
    problem ??= found.problem;
  }
  return { ok: false, reason: problem ?? 'the answer holds no JSON object' };
}

/** Whether the whole text (trimmed) parses as a JSON array. */
function isJsonArray(text: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[')) return false;
  try {
    return Array.isArray(JSON.parse(trimmed));
  } catch {
    return false;
  }
}

/** The top-level `{…}` in a text that parse, whether one is left unclosed, and why the first that did not parse failed. */
function objectsIn(text: string): { objects: Record<string, unknown>[]; unclosed: boolean; problem?: string } {
  const objects: Record<string, unknown>[] = [];
  let problem: string | undefined;
  let start = text.indexOf('{');
  while (start >= 0) {
    const end = matchingBrace(text, start);
    if (end < 0) return { objects, unclosed: true };
    try {
      // A balanced {…} that parses is always an object.
      objects.push(JSON.parse(text.slice(start, end + 1)) as Record<string, unknown>);
    } catch (error) {
      problem ??= `the answer is not valid JSON (${error instanceof Error ? error.message : String(error)})`;
    }
    start = text.indexOf('{', end + 1);
  }
  return { objects, unclosed: false, ...(problem ? { problem } : {}) };
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
