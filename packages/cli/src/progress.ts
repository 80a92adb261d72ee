import type { OutputStream } from './io.js';
import { clipToWidth, displayWidth } from './text-width.js';

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
      this.stream.write(`\r\u001b[2K${this.terminalLine(done, total, detail)}`);
      return;
    }
    const tenth = total ? Math.floor((done / total) * 10) : Math.floor(done / 1000);
    if (tenth === this.lastTenth) return;
    this.lastTenth = tenth;
    this.stream.write(`${this.line(this.label, done, total, detail, false)}\n`);
  }

  /**
   * The line with a bar, within the terminal's width: a line that wraps is redrawn below itself,
   * leaving a trail of copies. A long label (reindex's holds the embedder id) is cut first, so the
   * bar, percent and counts always show; then the end of the detail.
   */
  private terminalLine(done: number, total: number | undefined, detail: string): string {
    const columns = this.stream.columns;
    if (!columns) return this.line(this.label, done, total, detail, true);
    const counts = displayWidth(this.line('', done, total, '', true));
    const label = clipToWidth(this.label, Math.max(1, columns - 1 - counts));
    return clipToWidth(this.line(label, done, total, detail, true), columns - 1);
  }

  /** End the progress line (a terminal's line is cleared, a log's last line stays). */
  finish(): void {
    if (!this.enabled) return;
    if (this.stream.isTTY && this.drawn) this.stream.write('\r\u001b[2K');
    this.drawn = false;
  }

  private line(label: string, done: number, total: number | undefined, detail: string, bar: boolean): string {
    const suffix = detail ? `  ${detail}` : '';
    if (!total) return `${label} ${done}${suffix}`;
    const ratio = Math.min(1, done / total);
    const percent = `${Math.floor(ratio * 100)}%`.padStart(4);
    if (!bar) return `${label} ${done}/${total} (${percent.trim()})${suffix}`;
    const width = 24;
    const filled = Math.round(ratio * width);
    return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${percent} ${done}/${total}${suffix}`;
  }
}
