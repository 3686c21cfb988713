import { randomBytes } from 'node:crypto';
import type { PrismaClient, WebhookEndpoint } from '../../generated/prisma/client.js';
import { InputError } from '../../errors/domain.js';
import { isUuid } from '../../lib/uuid.js';

/** Standard Webhooks secret: `whsec_` + base64 of a random key. */
function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function createWebhook(
  prisma: PrismaClient,
  input: { workspaceId: string; url: string; events: string[] },
): Promise<WebhookEndpoint> {
  return prisma.webhookEndpoint.create({ data: { ...input, events: [...new Set(input.events)], secret: newSecret() } });
}

export function listWebhooks(prisma: PrismaClient, workspaceId: string): Promise<WebhookEndpoint[]> {
  return prisma.webhookEndpoint.findMany({ where: { workspaceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

export async function deleteWebhook(prisma: PrismaClient, id: string): Promise<void> {
  const { count } = isUuid(id) ? await prisma.webhookEndpoint.deleteMany({ where: { id } }) : { count: 0 };
  if (count === 0) throw new InputError(`No webhook has id ${id}.`);
}
