import type { OutputStream } from './io.js';
import { clipToWidth } from './text-width.js';

/**
 * Progress of a long command on stderr. On a terminal: one line redrawn in
 * place, cut to the terminal's width, a bar when the total is known.
 * Elsewhere (a log, CI): a plain line at each tenth of the way and at the
 * end, so logs stay short.
 */
export class Progress {
  private lastDraw = 0;
  private lastTenth = -1;
  private drawn = false;

  constructor(
    private readonly stream: OutputStream,
    private readonly label: string,
    private readonly enabled: boolean,
    private readonly now: () => number = () => performance.now(),
  ) {}

  update(done: number, total: number | undefined, detail = ''): void {
    if (!this.enabled) return;
    if (this.stream.isTTY) {
      // Redraw at most ten times a second; the last update always shows.
      const at = this.now();
      if (this.drawn && at - this.lastDraw < 100 && done !== total) return;
      this.lastDraw = at;
      this.drawn = true;
      // Within the terminal's width: a line that wraps is redrawn below itself, leaving a trail of copies.
      const line = this.line(done, total, detail, true);
      this.stream.write(`\r\u001b[2K${this.stream.columns ? clipToWidth(line, this.stream.columns - 1) : line}`);
      return;
    }
    const tenth = total ? Math.floor((done / total) * 10) : Math.floor(done / 1000);
    if (tenth === this.lastTenth) return;
    this.lastTenth = tenth;
    this.stream.write(`${this.line(done, total, detail, false)}\n`);
  }

  /** End the progress line (a terminal's line is cleared, a log's last line stays). */
  finish(): void {
    if (!this.enabled) return;
    if (this.stream.isTTY && this.drawn) this.stream.write('\r\u001b[2K');
    this.drawn = false;
  }

  private line(done: number, total: number | undefined, detail: string, bar: boolean): string {
    const suffix = detail ? `  ${detail}` : '';
    if (!total) return `${this.label} ${done}${suffix}`;
    const ratio = Math.min(1, done / total);
    const percent = `${Math.floor(ratio * 100)}%`.padStart(4);
    if (!bar) return `${this.label} ${done}/${total} (${percent.trim()})${suffix}`;
    const width = 24;
    const filled = Math.round(ratio * width);
    return `${this.label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${percent} ${done}/${total}${suffix}`;
  }
}
