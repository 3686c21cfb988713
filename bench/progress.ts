/**
 * Progress of long bench steps on stderr (stdout stays free for `--json`): a bar
 * redrawn in place on a terminal, a line every few seconds otherwise.
 */
export class Progress {
  private readonly started = performance.now();
  private lastLine = 0;
  private readonly tty = Boolean(process.stderr.isTTY);

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly unit = 'rows',
  ) {}

  update(done: number): void {
    const now = performance.now();
    const final = done >= this.total;
    if (!this.tty && !final && (done === 0 || now - this.lastLine < 5000)) return;
    this.lastLine = now;
    const seconds = (now - this.started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const eta = rate > 0 ? (this.total - done) / rate : 0;
    const fraction = this.total > 0 ? Math.min(1, done / this.total) : 1;
    const width = 24;
    const filled = Math.round(fraction * width);
    const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
    const text =
      `${this.label.padEnd(22)} ${bar} ${(fraction * 100).toFixed(0).padStart(3)}% ` +
      `${done.toLocaleString('en-US')}/${this.total.toLocaleString('en-US')} ${this.unit} ` +
      `${compact(rate)} ${this.unit}/s ${final ? `in ${duration(seconds)}` : `ETA ${duration(eta)}`}`;
    if (this.tty) process.stderr.write(`\r\x1b[K${text}${final ? '\n' : ''}`);
    else process.stderr.write(`${text}\n`);
  }
}

function compact(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return n.toFixed(0);
}

export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/** One line of what the bench is doing, on stderr. */
export function note(text: string): void {
  process.stderr.write(`${text}\n`);
}
