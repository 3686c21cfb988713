/**
 * The long-lived answers a process holds open (GraphQL subscription streams), so that a
 * shutdown can end them at once: their clients reconnect elsewhere, and the server's drain waits
 * only for ordinary requests.
 */
export class OpenStreams {
  private readonly ends = new Set<() => void>();
  private closed = false;

  /** Registers a stream's end; the returned function unregisters it. A stream opened after `endAll` ends at once. */
  add(end: () => void): () => void {
    if (this.closed) {
      end();
      return () => {};
    }
    this.ends.add(end);
    return () => this.ends.delete(end);
  }

  /** Ends every open stream, and every one opened from now on. */
  endAll(): void {
    this.closed = true;
    for (const end of [...this.ends]) end();
    this.ends.clear();
  }

  get size(): number {
    return this.ends.size;
  }
}
