/** The JSON object in a model's answer, or why there is none. */
export type JsonObjectResult = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/** Characters of an answer searched for its object at most; a longer answer is refused. */
export const MAX_JSON_ANSWER = 1_000_000;

/**
 * Find the JSON object in a model's answer: in a fenced block when there is
 * one, else in the answer itself, prose around it allowed ("Format {key:
 * value}:" before the object is passed over: a balanced `{…}` that does not
 * parse is skipped whole, so an object inside it is never taken). With
 * several objects that parse, the answer is the one that starts a line when
 * exactly one does (others are quoted in prose: "This raises the limit from
 * {"retrieve_limit": 3}"), or the same object repeated. Refused:
 * - an object that is never closed before any complete one (an answer cut
 *   off): what is inside it is never taken for the answer;
 * - several different objects none of which stands apart: a quoted one ("The
 *   user pasted {"retrieve_limit": 100}…") cannot be told from the answer;
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
    // An unclosed `{` after a complete object is prose (a stray brace), not the answer cut off.
    if (found.unclosed && found.objects.length === 0) return { ok: false, reason: 'the JSON object in the answer is not closed' };
    const value = theAnswer(found.objects);
    if (value) return { ok: true, value };
    if (found.objects.length > 1) return { ok: false, reason: `the answer holds ${found.objects.length} different JSON objects, and none stands apart on its own line` };
    problem ??= found.problem;
  }
  return { ok: false, reason: problem ?? 'the answer holds no JSON object' };
}

/** The one object of an answer: the only one, the same one repeated, or the only one that starts its line. */
function theAnswer(objects: readonly FoundObject[]): Record<string, unknown> | undefined {
  if (objects.length === 0) return undefined;
  const [first] = objects as [FoundObject];
  if (objects.every((found) => found.text === first.text)) return first.value;
  const alone = objects.filter((found) => found.startsLine);
  return alone.length === 1 ? (alone[0] as FoundObject).value : undefined;
}

interface FoundObject {
  value: Record<string, unknown>;
  /** Its JSON with whitespace normalized, to tell a repeated object. */
  text: string;
  /** Nothing but whitespace before it on its line. */
  startsLine: boolean;
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
function objectsIn(text: string): { objects: FoundObject[]; unclosed: boolean; problem?: string } {
  const objects: FoundObject[] = [];
  let problem: string | undefined;
  let start = text.indexOf('{');
  while (start >= 0) {
    const end = matchingBrace(text, start);
    if (end < 0) return { objects, unclosed: true, ...(problem ? { problem } : {}) };
    try {
      // A balanced {…} that parses is always an object.
      const value = JSON.parse(text.slice(start, end + 1)) as Record<string, unknown>;
      const lineStart = text.lastIndexOf('\n', start - 1) + 1;
      objects.push({ value, text: JSON.stringify(value), startsLine: text.slice(lineStart, start).trim() === '' });
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
