import type { PrismaClient } from '../generated/prisma/client.js';
import { createChannel } from '../modules/channels/channels.service.js';
import { createTemplate } from '../modules/templates/templates.service.js';
import { createUser } from '../modules/users/users.service.js';
import { createWorkspace } from '../modules/workspaces/workspaces.service.js';

export const DEMO_HOSTNAME = 'localhost';

export interface DemoSeed {
  workspaceId: string;
  channelId: string;
  apiKey: string;
}

/**
 * Creates the demo workspace for hostname `localhost`: one channel with an API key,
 * one workspace user and one approved template. Returns null when it already exists.
 */
export async function seedDemo(prisma: PrismaClient): Promise<DemoSeed | null> {
  if (await prisma.workspace.findUnique({ where: { hostname: DEMO_HOSTNAME } })) return null;
  const workspace = await createWorkspace(prisma, { hostname: DEMO_HOSTNAME, name: 'Demo workspace' });
  const { channel, apiKey } = await createChannel(prisma, { workspaceId: workspace.id, name: 'Demo channel', type: 'whatsapp' });
  await createUser(prisma, { workspaceId: workspace.id, name: 'Demo Agent', email: 'agent@demo.localhost' });
  await createTemplate(prisma, {
    workspaceId: workspace.id,
    channelId: channel.id,
    name: 'welcome',
    language: 'en',
    body: 'Hello {{1}}, welcome to {{2}}!',
    status: 'approved',
  });
  return { workspaceId: workspace.id, channelId: channel.id, apiKey };
}
