import http from 'node:http';
import type { BenchRequest } from './operations.js';

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/**
 * One request over node:http (fetch would replace the Host header, which names
 * the workspace), on a kept-alive connection like autocannon's.
 */
export function send(base: string, request: BenchRequest): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${request.path}`, { method: request.method, headers: request.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(request.body);
  });
}

/** Closes the kept-alive connections, so that a stopping server is not held open by them. */
export function closeConnections(): void {
  agent.destroy();
}
