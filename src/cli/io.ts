/** Where an admin command writes: one JSON object on stdout, errors and progress on stderr. */
export interface AdminIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  /** The stream stderr lines go to, when a command draws on it (a progress bar, when it is a terminal). */
  terminal?: NodeJS.WritableStream & { isTTY?: boolean };
  /**
   * Lets a command that can stop part-way take Ctrl-C (SIGINT) itself: `stop` is called instead of
   * the process ending, for as long as the command has not called the function returned. A
   * command that never asks ends on Ctrl-C as any process does.
   */
  onInterrupt?: (stop: () => void) => () => void;
}
