import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The bench's stand-in for Meta's WhatsApp Cloud API, on 127.0.0.1 in the runner
 * process: it takes `POST /{version}/{phone-number-id}/messages` with the one
 * access token it knows (anything else is Graph's 401, code 190), answers with a
 * message id as Graph does, and notes when each text arrived. Both servers'
 * deliveries go to it.
 */
export interface BenchWhatsAppFake {
  url: string;
  /** Sends taken so far. */
  received(): number;
  /** Calls `listener` with the text of each send taken, at its arrival (performance.now()). */
  onText(listener: ((text: string, at: number) => void) | null): void;
  close(): Promise<void>;
}

export async function startBenchWhatsAppFake(token: string): Promise<BenchWhatsAppFake> {
  let received = 0;
  let listener: ((text: string, at: number) => void) | null = null;
  const answer = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      if (req.method !== 'POST' || !/^\/v\d+\.\d+\/[^/]+\/messages$/.test(req.url ?? '')) {
        return answer(res, 404, { error: { message: 'Unknown path', type: 'OAuthException', code: 100 } });
      }
      if (req.headers.authorization !== `Bearer ${token}`) {
        return answer(res, 401, { error: { message: 'Invalid OAuth access token.', type: 'OAuthException', code: 190 } });
      }
      let body: { to?: string; text?: { body?: string } };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        return answer(res, 400, { error: { message: 'Invalid JSON', type: 'OAuthException', code: 100 } });
      }
      received++;
      answer(res, 200, { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: `wamid.${randomBytes(12).toString('hex')}` }] });
      listener?.(body.text?.body ?? '', at);
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    onText: (next) => (listener = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
