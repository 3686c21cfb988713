import type { TestApp } from './app.js';
import { workspaceWithChannel } from './factories.js';
import { restClient } from './rest.js';
import { createTemplate } from '../../src/modules/templates/templates.service.js';
import { createUser } from '../../src/modules/users/users.service.js';

/** A workspace with a channel, a workspace user, an approved two-parameter template and a REST client. */
export async function messagingSetup(app: TestApp) {
  const ws = await workspaceWithChannel(app.db.prisma);
  const api = restClient(app, ws.host, ws.apiKey);
  const user = await createUser(app.db.prisma, { workspaceId: ws.workspace.id, name: 'Agent Smith', email: 'Agent@Example.com' });
  const template = await createTemplate(app.db.prisma, {
    workspaceId: ws.workspace.id,
    channelId: ws.channel.id,
    name: 'order_ready',
    language: 'en',
    body: 'Hi {{1}}, order {{2}} is ready.',
    status: 'approved',
  });
  async function contact(body: Record<string, unknown>) {
    const created = await api.post('/contacts', { name: 'Recipient', ...body });
    if (created.status !== 201) throw new Error(`contact not created: ${JSON.stringify(created.body)}`);
    return created.body.data.contact as { id: string; name: string };
  }
  async function send(body: Record<string, unknown>) {
    return api.post('/messages', body);
  }
  return { ...ws, api, user, template, contact, send };
}
