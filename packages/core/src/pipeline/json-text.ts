/** The JSON object in a model's answer, or why there is none. */
export type JsonObjectResult = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/** Characters of an answer searched for its object at most; a longer answer is refused. */
const MAX_JSON_ANSWER = 1_000_000;

/**
 * Find the JSON object in a model's answer, fenced or not, prose around it
 * allowed (a `<think>` block left out) ("Format {key:
 * value}:" before the object is passed over: a balanced `{…}` that does not
 * parse is skipped whole, so an object inside it is never taken). The same
 * object repeated (in any key order) counts once. Refused, and the caller
 * keeps what it had (the policy unchanged, the deterministic consolidation):
 * - any `{` that is never closed (an answer cut off): no object beside it is
 *   taken for the answer;
 * - several different objects: a quoted one ("I recommend {…15} instead of
 *   the current {…10}", "The user pasted {"retrieve_limit": 100}") cannot be
 *   told from the answer, wherever it stands;
 * - an answer that is a JSON array, a string or a number, and one longer than
 *   `MAX_JSON_ANSWER` characters.
 */
export function parseJsonObject(answer: string): JsonObjectResult {
  if (answer.length > MAX_JSON_ANSWER) return { ok: false, reason: `the answer is longer than ${MAX_JSON_ANSWER} characters` };
  // A reasoning model's <think> block is not its answer (an object it weighed there is not the one it gives).
  const text = answer.replace(/<think>[\s\S]*?<\/think>/giu, '');
  const fenced = /```[a-z]*[ \t]*\r?\n([\s\S]*?)```/iu.exec(text);
  if (isJsonArray(fenced?.[1] ?? text)) return { ok: false, reason: 'the answer is a JSON array, not an object' };
  // Every object in the answer, fenced or not: a config quoted in a fence is no more the answer than one in prose.
  const found = objectsIn(text);
  if (found.unclosed) return { ok: false, reason: 'the JSON object in the answer is not closed' };
  const value = theAnswer(found.objects);
  if (value) return { ok: true, value };
  if (found.objects.length > 1) return { ok: false, reason: `the answer holds ${found.objects.length} different JSON objects: a quoted one cannot be told from the answer` };
  return { ok: false, reason: found.problem ?? 'the answer holds no JSON object' };
}

/** The one object of an answer: the only one, or the same one repeated. */
function theAnswer(objects: readonly FoundObject[]): Record<string, unknown> | undefined {
  if (objects.length === 0) return undefined;
  const [first] = objects as [FoundObject];
  return objects.every((found) => found.text === first.text) ? first.value : undefined;
}

interface FoundObject {
  value: Record<string, unknown>;
  /** Its JSON with keys sorted and whitespace normalized, to tell a repeated object. */
  text: string;
}

/** JSON with the keys of every object sorted: the same object written in another key order reads the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
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
      objects.push({ value, text: canonical(value) });
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
