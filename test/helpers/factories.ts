import { randomBytes } from 'node:crypto';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { createChannel } from '../../src/modules/channels/channels.service.js';
import { createConnection, issueChannelKey } from '../../src/modules/credentials/credentials.service.js';
import { createWorkspace } from '../../src/modules/workspaces/workspaces.service.js';

export function uniqueHost(label = 'ws'): string {
  return `${label}-${randomBytes(5).toString('hex')}.test`;
}

/** A workspace with one active channel and that channel's API key. */
export async function workspaceWithChannel(prisma: PrismaClient, name = 'Main channel') {
  const workspace = await createWorkspace(prisma, { hostname: uniqueHost(), name: 'Test workspace' });
  const { channel, apiKey } = await createChannel(prisma, { workspaceId: workspace.id, name, type: 'whatsapp' });
  return { workspace, channel, apiKey, host: workspace.hostname };
}

export async function addChannel(prisma: PrismaClient, workspaceId: string, name: string) {
  return createChannel(prisma, { workspaceId, name, type: 'sms' });
}

export { createConnection, issueChannelKey };

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, accept: 'application/json' };
}
