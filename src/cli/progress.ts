import cliProgress from 'cli-progress';

/** Where a command shows progress: a bar on `terminal` when it is a TTY, else lines through `line`. */
export interface ProgressOutput {
  /** The stream a bar is drawn on (the admin command's stderr), when it is a terminal. */
  terminal?: NodeJS.WritableStream & { isTTY?: boolean };
  line(text: string): void;
}

export interface ProgressOptions<P extends object> {
  /** cli-progress' format of the bar, `{bar}`, `{value}`, `{total}`, `{percentage}` and the payload's keys. */
  format: string;
  total: number;
  value: number;
  payload: P;
  /** The state as one line, for output that is not a terminal. */
  line(value: number, total: number, payload: P): string;
  /** The least time between two lines (default 1000 ms). */
  everyMs?: number;
}

export interface Progress<P extends object> {
  update(value: number, payload: P, total?: number): void;
  /** Ends the bar, or prints the latest state if its line is still owed. */
  stop(): void;
}

/**
 * Progress of an admin command (docs/operations.md, "Admin commands"): a bar (cli-progress) on a
 * terminal, otherwise one line at most every `everyMs`; a state that comes sooner is shown once
 * that time has passed, unless a newer one replaces it first.
 */
export function startProgress<P extends object>(output: ProgressOutput, options: ProgressOptions<P>): Progress<P> {
  const terminal = output.terminal?.isTTY ? output.terminal : undefined;
  let total = options.total;
  if (terminal) {
    const bar = new cliProgress.SingleBar({ stream: terminal, format: options.format, hideCursor: true, emptyOnZero: true }, cliProgress.Presets.shades_classic);
    bar.start(total, options.value, options.payload);
    return {
      update(value, payload, newTotal) {
        if (newTotal !== undefined && newTotal !== total) bar.setTotal((total = newTotal));
        bar.update(value, payload);
      },
      stop: () => bar.stop(),
    };
  }
  const everyMs = options.everyMs ?? 1000;
  let printedAt = -Infinity;
  let owed: string | null = null;
  let timer: NodeJS.Timeout | undefined;
  const print = () => {
    clearTimeout(timer);
    timer = undefined;
    if (!owed) return;
    output.line(owed);
    owed = null;
    printedAt = performance.now();
  };
  const show = (value: number, payload: P) => {
    owed = options.line(value, total, payload);
    const wait = printedAt + everyMs - performance.now();
    if (wait <= 0) print();
    else timer ??= setTimeout(print, wait);
  };
  show(options.value, options.payload);
  return {
    update(value, payload, newTotal) {
      if (newTotal !== undefined) total = newTotal;
      show(value, payload);
    },
    stop: print,
  };
}
