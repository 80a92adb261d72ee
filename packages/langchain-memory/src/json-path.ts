/**
 * The texts at a field path of a JSON value, read as LangGraph's stores read
 * `index.fields` (`getTextAtPath` and `tokenizePath` in the store utils of
 * `@langchain/langgraph-checkpoint`), so an item gets the same texts, in the
 * same order, as in LangGraph's `InMemoryStore`:
 *
 * - `"$"` (or `""`) is the whole value as JSON, indented by 2;
 * - `"a.b"` a nested field; `"a.*"` every field (or element) of `a`;
 * - `"list[0]"`, `"list[-1]"`, `"list[*]"` array elements;
 * - `"{title,body}"` several fields, each a plain path like `body.text`
 *   (inside braces `[i]` and `*` are not read); a path ends at its braces.
 *
 * Strings, numbers and booleans give their text, objects and arrays their
 * JSON; missing paths give nothing.
 */
export function textsAtPath(value: unknown, path: string): string[] {
  if (!path || path === '$') return [json(value)];
  return textsAt(value, tokenizePath(path), 0);
}

/** "a.b[*].c" → ["a", "b", "[*]", "c"]; "a.{b,c.d}" → ["a", "{b,c.d}"] (as LangGraph's `tokenizePath`). */
export function tokenizePath(path: string): string[] {
  const tokens: string[] = [];
  let current = '';
  let position = 0;
  while (position < path.length) {
    const char = path[position] as string;
    if (char === '[' || char === '{') {
      // A bracket or brace group, nested ones included, is one token.
      const close = char === '[' ? ']' : '}';
      if (current) tokens.push(current);
      current = '';
      let depth = 1;
      let group = char;
      position += 1;
      while (position < path.length && depth > 0) {
        const inner = path[position] as string;
        if (inner === char) depth += 1;
        else if (inner === close) depth -= 1;
        group += inner;
        position += 1;
      }
      tokens.push(group);
      continue;
    }
    if (char === '.') {
      if (current) tokens.push(current);
      current = '';
    } else {
      current += char;
    }
    position += 1;
  }
  if (current) tokens.push(current);
  return tokens;
}

function textsAt(value: unknown, tokens: readonly string[], position: number): string[] {
  if (position >= tokens.length) return leafTexts(value);
  const token = tokens[position] as string;
  const texts: string[] = [];
  // LangGraph reads a leading "$" token as the whole value too.
  if (position === 0 && token === '$') texts.push(json(value));

  if (token.startsWith('[') && token.endsWith(']')) {
    if (!Array.isArray(value)) return [];
    const index = token.slice(1, -1);
    if (index === '*') {
      for (const item of value) texts.push(...textsAt(item, tokens, position + 1));
    } else {
      let at = Number.parseInt(index, 10);
      if (at < 0) at += value.length;
      if (at >= 0 && at < value.length) texts.push(...textsAt(value[at], tokens, position + 1));
    }
  } else if (token.startsWith('{') && token.endsWith('}')) {
    if (!isObject(value)) return [];
    for (const field of token.slice(1, -1).split(',')) {
      const found = fieldAt(value, tokenizePath(field.trim()));
      if (found === undefined) continue;
      // Unlike a path's end, a field holding null gives "null".
      texts.push(isText(found) ? String(found) : json(found));
    }
  } else if (token === '*') {
    const children = Array.isArray(value) ? value : isObject(value) ? Object.values(value) : [];
    for (const child of children) texts.push(...textsAt(child, tokens, position + 1));
  } else if (isObject(value) && token in value) {
    texts.push(...textsAt(value[token], tokens, position + 1));
  }
  return texts;
}

/** A field inside braces: plain keys only, undefined when missing. */
function fieldAt(value: Record<string, unknown>, keys: readonly string[]): unknown {
  if (keys.length === 0) return undefined;
  let current: unknown = value;
  for (const key of keys) {
    if (!isObject(current) || !(key in current)) return undefined;
    current = current[key];
  }
  return current;
}

function leafTexts(value: unknown): string[] {
  if (isText(value)) return [String(value)];
  if (value === null || value === undefined) return [];
  return typeof value === 'object' ? [json(value)] : [];
}

function isText(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** Objects and arrays: LangGraph's paths read arrays by key too (`list.0`, `list.length`). */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
