import type { PrismaClient, WebhookEndpoint } from '../../generated/prisma/client.js';
import { InputError } from '../../errors/domain.js';
import { isUuid } from '../../lib/uuid.js';
import { newWebhookSecret } from '../../lib/webhook-signature.js';

export function createWebhook(
  prisma: PrismaClient,
  input: { workspaceId: string; url: string; events: string[] },
): Promise<WebhookEndpoint> {
  return prisma.webhookEndpoint.create({ data: { ...input, events: [...new Set(input.events)], secret: newWebhookSecret() } });
}

export function listWebhooks(prisma: PrismaClient, workspaceId: string): Promise<WebhookEndpoint[]> {
  return prisma.webhookEndpoint.findMany({ where: { workspaceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

export async function deleteWebhook(prisma: PrismaClient, id: string): Promise<void> {
  const { count } = isUuid(id) ? await prisma.webhookEndpoint.deleteMany({ where: { id } }) : { count: 0 };
  if (count === 0) throw new InputError(`No webhook has id ${id}.`);
}
