import net from 'node:net';

/** One statement a client ran: its SQL text and, for the extended protocol, its text parameters. */
export interface Statement {
  sql: string;
  params: (string | null)[];
}

/**
 * A TCP proxy in front of PostgreSQL that reads the frontend side of the wire
 * protocol and records every statement its clients run: each simple Query ('Q')
 * and each Execute ('E') of the extended protocol, with the text Parse gave the
 * statement and the parameters Bind gave the portal. Counting here sees exactly
 * what reaches the database, whatever the client library (Prisma, pg), so the
 * gateway and the floor are counted the same way. Nothing is changed in transit.
 */
export class StatementCounter {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  readonly statements: Statement[] = [];
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<this> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server!.address() as net.AddressInfo).port;
    return this;
  }

  /** Forgets what was recorded so far and returns it. */
  take(): Statement[] {
    return this.statements.splice(0);
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
    this.server = null;
  }

  private accept(client: net.Socket) {
    const upstream = net.connect(this.target.port, this.target.host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.on('data', (chunk) => client.write(chunk));
    const parser = new FrontendParser((statement) => this.statements.push(statement));
    client.on('data', (chunk) => {
      upstream.write(chunk);
      parser.push(chunk);
    });
  }
}

/** Splits the frontend byte stream into messages; the first message has no type byte. */
class FrontendParser {
  private buffer: Buffer = Buffer.alloc(0);
  private started = false;
  /** Prepared statement name → SQL text. */
  private readonly prepared = new Map<string, string>();
  /** Portal name → statement. */
  private readonly portals = new Map<string, Statement>();

  constructor(private readonly onStatement: (statement: Statement) => void) {}

  push(chunk: Buffer) {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      if (!this.started) {
        if (this.buffer.length < 4) return;
        const length = this.buffer.readInt32BE(0);
        if (this.buffer.length < length) return;
        const code = this.buffer.readInt32BE(4);
        this.buffer = this.buffer.subarray(length);
        // An SSLRequest or GSSENCRequest is followed by another untyped message: the real start-up.
        if (code !== 80877103 && code !== 80877104) this.started = true;
        continue;
      }
      if (this.buffer.length < 5) return;
      const type = String.fromCharCode(this.buffer[0]!);
      const length = this.buffer.readInt32BE(1);
      if (this.buffer.length < 1 + length) return;
      const body = this.buffer.subarray(5, 1 + length);
      this.buffer = this.buffer.subarray(1 + length);
      this.message(type, body);
    }
  }

  private message(type: string, body: Buffer) {
    if (type === 'Q') {
      this.onStatement({ sql: cstring(body, 0)[0], params: [] });
    } else if (type === 'P') {
      const [name, next] = cstring(body, 0);
      this.prepared.set(name, cstring(body, next)[0]);
    } else if (type === 'B') {
      const [portal, afterPortal] = cstring(body, 0);
      const [statement, afterStatement] = cstring(body, afterPortal);
      let offset = afterStatement;
      const formatCount = body.readInt16BE(offset);
      const formats: number[] = [];
      for (let i = 0; i < formatCount; i++) formats.push(body.readInt16BE(offset + 2 + i * 2));
      offset += 2 + formatCount * 2;
      const paramCount = body.readInt16BE(offset);
      offset += 2;
      const params: (string | null)[] = [];
      for (let i = 0; i < paramCount; i++) {
        const size = body.readInt32BE(offset);
        offset += 4;
        if (size < 0) {
          params.push(null);
          continue;
        }
        const format = formats.length === 1 ? formats[0] : (formats[i] ?? 0);
        params.push(format === 1 ? `\\x${body.subarray(offset, offset + size).toString('hex')}` : body.toString('utf8', offset, offset + size));
        offset += size;
      }
      this.portals.set(portal, { sql: this.prepared.get(statement) ?? '', params });
    } else if (type === 'E') {
      const [portal] = cstring(body, 0);
      this.onStatement(this.portals.get(portal) ?? { sql: '', params: [] });
    }
  }
}

function cstring(buffer: Buffer, offset: number): [string, number] {
  const end = buffer.indexOf(0, offset);
  return [buffer.toString('utf8', offset, end), end + 1];
}
