import type { PrismaClient, WebhookEndpoint } from '../../generated/prisma/client.js';
import { InputError } from '../../errors/domain.js';
import { isUuid } from '../../lib/uuid.js';
import { newWebhookSecret } from '../../lib/webhook-signature.js';
import type { Sealer } from '../../lib/sealed.js';
import { requireSealer } from '../secrets/secrets.service.js';

/** Subscribes a URL to a workspace's events; the signing secret is stored sealed and returned once. */
export async function createWebhook(
  prisma: PrismaClient,
  input: { workspaceId: string; url: string; events: string[] },
  sealer: Sealer | null | undefined,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const secret = newWebhookSecret();
  const endpoint = await prisma.webhookEndpoint.create({
    data: { ...input, events: [...new Set(input.events)], secret: requireSealer(sealer).seal(secret) },
  });
  return { endpoint, secret };
}

export function listWebhooks(prisma: PrismaClient, workspaceId: string): Promise<WebhookEndpoint[]> {
  return prisma.webhookEndpoint.findMany({ where: { workspaceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

export async function deleteWebhook(prisma: PrismaClient, id: string): Promise<void> {
  const { count } = isUuid(id) ? await prisma.webhookEndpoint.deleteMany({ where: { id } }) : { count: 0 };
  if (count === 0) throw new InputError(`No webhook has id ${id}.`);
}
