import net from 'node:net';

/**
 * A raw SMTP client for floods: one session on its own connection, written by hand so that the
 * client itself holds almost nothing (a mail's body is written from one shared 64 KiB piece, each
 * write waiting for the socket to drain), and what the listener's process holds is its own.
 */
export interface SmtpSession {
  /** The replies so far, one line each. */
  replies: string[];
  /** Waits for the next reply line matching `code` (a 3-digit prefix or any), or rejects when the connection ends first. */
  reply(code?: RegExp): Promise<string>;
  /** Sends a command line. */
  command(line: string): void;
  /** Sends `bytes` bytes of a mail body (lines of 76 `x`), then the final dot; resolves once written. */
  body(bytes: number, headers: string): Promise<void>;
  /** Resolves once the server closed the connection. */
  closed: Promise<void>;
  socket: net.Socket;
}

const LINE = `${'x'.repeat(76)}\r\n`;
const PIECE = Buffer.from(LINE.repeat(Math.floor(65_536 / LINE.length)));

export function smtpSession(port: number): SmtpSession {
  const socket = net.connect(port, '127.0.0.1');
  const replies: string[] = [];
  let buffer = '';
  let seen = 0;
  const waiters: (() => void)[] = [];
  let ended = false;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    buffer += chunk.toString('latin1');
    let end: number;
    while ((end = buffer.indexOf('\r\n')) >= 0) {
      replies.push(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  socket.on('close', () => {
    ended = true;
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    replies,
    socket,
    closed,
    async reply(code = /^\d{3} /) {
      for (;;) {
        while (seen < replies.length) {
          const line = replies[seen++]!;
          // A multi-line reply's last line has a space after the code.
          if (/^\d{3} /.test(line) && code.test(line)) return line;
          if (/^\d{3} /.test(line)) throw new Error(`unexpected reply: ${line}`);
        }
        if (ended) throw new Error(`connection closed; replies: ${replies.join(' | ')}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    command(line) {
      if (socket.writable) socket.write(`${line}\r\n`);
    },
    async body(bytes, headers) {
      const write = (data: Buffer | string) => (socket.writable && !socket.write(data) ? new Promise<void>((resolve) => socket.once('drain', resolve).once('close', resolve)) : Promise.resolve());
      await write(`${headers}\r\n`);
      let sent = Buffer.byteLength(headers) + 2;
      while (sent + PIECE.length <= bytes && socket.writable) {
        await write(PIECE);
        sent += PIECE.length;
      }
      await write('.\r\n');
    },
  };
}
