import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { mergeDeterministic } from '../src/index.js';

// The merge examples of the docs are checked: every row of a `| old | new | result |` table in these files is run
// through the offline merge, and its `result` must be the exact text it returns.
const DOCUMENTS = ['../../../docs/merging.md', '../../../README.md'];

interface Example {
  readonly where: string;
  readonly old: string;
  readonly fresh: string;
  readonly result: string;
}

// A table row's cells, without its outer pipes; `\|` is a pipe inside a cell.
function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim().replaceAll('\\|', '|'));
}

function examples(document: string): Example[] {
  const lines = readFileSync(fileURLToPath(new URL(document, import.meta.url)), 'utf8').split('\n');
  const found: Example[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (!lines[index]!.trim().startsWith('|') || cells(lines[index]!).join('|') !== 'old|new|result') continue;
    // Skip the header and its | --- | line; the rows run to the first line that is not one.
    for (index += 2; index < lines.length && lines[index]!.trim().startsWith('|'); index++) {
      const where = `${document.replace(/^(\.\.\/)+/, '')}:${index + 1}`;
      const row = cells(lines[index]!);
      if (row.length !== 3) throw new Error(`${where}: a row of an old | new | result table has ${row.length} cells`);
      const [old, fresh, result] = row as [string, string, string];
      found.push({ where, old, fresh, result });
    }
  }
  return found;
}

describe('the merge examples of the docs are what mergeDeterministic returns', () => {
  const rows = DOCUMENTS.flatMap(examples);

  it('finds the example tables', () => {
    // docs/merging.md has some 100 rows and the README a few: a parser that finds none checks nothing.
    expect(rows.filter((row) => row.where.startsWith('docs/')).length).toBeGreaterThan(90);
    expect(rows.filter((row) => row.where.startsWith('README')).length).toBeGreaterThanOrEqual(3);
  });

  it.each(rows)('$where: $old + $fresh', ({ old, fresh, result }) => {
    expect(mergeDeterministic(old, fresh, 'full', 10_000)).toBe(result);
  });
});
