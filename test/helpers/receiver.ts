import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real HTTP endpoint on 127.0.0.1 standing in for a channel's webhook receiver.
 * `respond` decides each answer (status, optional delay and headers) from the request number.
 */
export async function startReceiver(
  respond: (n: number, req: ReceivedRequest) => { status: number; delayMs?: number; headers?: Record<string, string> } = () => ({ status: 200 }),
) {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const entry = { headers: req.headers, body, at: Date.now() };
      received.push(entry);
      const { status, delayMs = 0, headers = {} } = respond(received.length, entry);
      setTimeout(() => res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end('ok'), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
