import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of PostgreSQL, to stage outages: `refuse`
 * closes the port and drops every connection; `silence` keeps connections open
 * but carries nothing (a network partition); `restore` forwards again.
 */
export class TcpProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private silent = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<this> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server!.address() as net.AddressInfo).port;
    return this;
  }

  private accept(client: net.Socket) {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => {});
    if (this.silent) return;
    const upstream = net.connect(this.target.port, this.target.host);
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('data', (chunk) => {
      if (!this.silent) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!this.silent) client.write(chunk);
    });
  }

  private dropAll() {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  async refuse(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.dropAll();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  silence(): void {
    this.silent = true;
  }

  async restore(): Promise<void> {
    this.silent = false;
    this.dropAll();
    if (!this.server) await this.start();
  }

  async stop(): Promise<void> {
    await this.refuse();
  }
}
