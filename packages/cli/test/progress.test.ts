import { describe, expect, it } from 'vitest';
import { Progress } from '../src/progress.js';

function sink(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, write: (text: string) => void writes.push(text) } };
}

describe('progress on stderr', () => {
  it('redraws one line with a bar on a terminal, at most every 100 ms, always showing the end', () => {
    const { writes, stream } = sink(true);
    let now = 0;
    const progress = new Progress(stream, 'import', true, () => now);
    progress.update(10, 100);
    now = 50;
    progress.update(20, 100); // too soon: skipped
    now = 200;
    progress.update(50, 100, '3 created');
    now = 210;
    progress.update(100, 100); // the end always shows
    progress.finish();
    expect(writes).toEqual([
      '\r\u001b[2Kimport [##----------------------]  10% 10/100',
      '\r\u001b[2Kimport [############------------]  50% 50/100  3 created',
      '\r\u001b[2Kimport [########################] 100% 100/100',
      '\r\u001b[2K',
    ]);
  });

  it('writes a plain line at each tenth when stderr is a log, and nothing when quiet', () => {
    const log = sink(false);
    const progress = new Progress(log.stream, 'export', true);
    for (let done = 1; done <= 40; done++) progress.update(done, 40);
    expect(log.writes).toHaveLength(11);
    expect(log.writes.at(-1)).toBe('export 40/40 (100%)\n');
    const quiet = sink(true);
    new Progress(quiet.stream, 'export', false).update(1, 2);
    expect(quiet.writes).toEqual([]);
  });
});

describe('progress on a narrow terminal', () => {
  it('cuts the line to the width, so that redrawing it never wraps into a trail of copies', () => {
    const writes: string[] = [];
    const stream = { isTTY: true, columns: 50, write: (text: string) => void writes.push(text) };
    new Progress(stream, 'import', true, () => 0).update(100, 3000, '100 created, 0 merged (newer history), 0 kept (already there)');
    expect(writes).toEqual(['\r\u001b[2Kimport [#-----------------------]   3% 100/3000 …']);
  });

  it('cuts a long label, not the counts: reindex with a long embedder id at 80 columns', () => {
    const writes: string[] = [];
    const stream = { isTTY: true, columns: 80, write: (text: string) => void writes.push(text) };
    const label = `reindex transformers:${'very-long-organisation/'.repeat(4)}paraphrase-multilingual-MiniLM-L12-v2`;
    expect(label.length).toBeGreaterThan(120);
    new Progress(stream, label, true, () => 0).update(640, 1280);
    const line = writes[0]!.replace('\r\u001b[2K', '');
    expect(line).toBe(`${label.slice(0, 37)}… [############------------]  50% 640/1280`);
    expect(line).toHaveLength(79);
  });
});
