/** Where an admin command writes: one JSON object on stdout, errors and progress on stderr. */
export interface AdminIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  /** The stream stderr lines go to, when a command draws on it (a progress bar, when it is a terminal). */
  terminal?: NodeJS.WritableStream & { isTTY?: boolean };
}
