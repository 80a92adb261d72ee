/**
 * The texts at a field path of a JSON value, as LangGraph's stores read
 * `index.fields`: `"$"` is the whole value as JSON; `"a.b"` a nested field;
 * `"list[*].text"`, `"list[0]"`, `"list[-1]"` array elements. Strings,
 * numbers and booleans give their text, objects and arrays their JSON;
 * missing paths give nothing.
 */
export function textsAtPath(value: unknown, path: string): string[] {
  if (path === '$' || path === '') return [JSON.stringify(value)];
  return walk(value, tokenize(path), 0);
}

function walk(value: unknown, tokens: readonly string[], position: number): string[] {
  if (position >= tokens.length) return leafText(value);
  const token = tokens[position] as string;
  if (token.startsWith('[') && token.endsWith(']')) {
    if (!Array.isArray(value)) return [];
    const index = token.slice(1, -1);
    if (index === '*') return value.flatMap((item) => walk(item, tokens, position + 1));
    let at = Number.parseInt(index, 10);
    if (Number.isNaN(at)) return [];
    if (at < 0) at += value.length;
    return at >= 0 && at < value.length ? walk(value[at], tokens, position + 1) : [];
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !(token in value)) return [];
  return walk((value as Record<string, unknown>)[token], tokens, position + 1);
}

function leafText(value: unknown): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  if (value === null || value === undefined) return [];
  return [JSON.stringify(value)];
}

/** "a.b[*].c" → ["a", "b", "[*]", "c"]. */
function tokenize(path: string): string[] {
  const tokens: string[] = [];
  for (const part of path.split('.')) {
    const match = /^([^[]*)((?:\[[^\]]*\])*)$/u.exec(part);
    if (!match) {
      tokens.push(part);
      continue;
    }
    if (match[1]) tokens.push(match[1]);
    for (const bracket of (match[2] ?? '').match(/\[[^\]]*\]/gu) ?? []) tokens.push(bracket);
  }
  return tokens;
}
