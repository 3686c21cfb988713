import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { addChannel, bearer, workspaceWithChannel } from '../../helpers/factories.js';
import { postOperation } from '../../helpers/graphql.js';
import { restClient } from '../../helpers/rest.js';
import { testSealer } from '../../helpers/secrets.js';
import { createWebhook } from '../../../src/modules/webhooks/webhooks.service.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

describe('the contact view lists the channels the contact opted out of', () => {
  it('in every REST answer and in GraphQL, oldest first, and [] for a contact who opted out of nothing', async () => {
    const ws = await workspaceWithChannel(app.db.prisma);
    const api = restClient(app, ws.host, ws.apiKey);
    await createWebhook(app.db.prisma, { workspaceId: ws.workspace.id, url: 'http://127.0.0.1:9/unused', events: ['contact.updated'] }, testSealer);
    const { channel: other } = await addChannel(app.db.prisma, ws.workspace.id, 'Second channel');
    const created = await api.post('/contacts', { name: 'Ann', email: 'ann@example.com', phone: '+31612345678' });
    expect(created.status).toBe(201);
    expect(created.body.data.contact.optOuts).toEqual([]);
    const id = created.body.data.contact.id as string;

    await app.db.prisma.contactOptOut.createMany({
      data: [
        { contactId: id, channelId: other.id, at: new Date('2026-01-02T03:04:05.678Z'), source: 'provider' },
        { contactId: id, channelId: ws.channel.id, at: new Date('2026-01-01T00:00:00.000Z'), source: 'keyword' },
      ],
    });
    const expected = [
      { channelId: ws.channel.id, at: '2026-01-01T00:00:00.000Z', source: 'keyword' },
      { channelId: other.id, at: '2026-01-02T03:04:05.678Z', source: 'provider' },
    ];

    expect((await api.get(`/contacts/${id}`)).body.data.contact.optOuts).toEqual(expected);
    expect((await api.get('/contacts/find?email=ANN@example.com')).body.data.contact.optOuts).toEqual(expected);
    expect((await api.get('/contacts')).body.data[0].optOuts).toEqual(expected);
    expect((await api.get('/contacts?search=ann')).body.data[0].optOuts).toEqual(expected);
    expect((await api.patch(`/contacts/${id}`, { name: 'Ann B' })).body.data.contact.optOuts).toEqual(expected);
    expect((await api.patch(`/contacts/${id}`, { phone: '+31612345670' })).body.data.contact.optOuts).toEqual(expected);

    // The contact.updated event carries the same view.
    const events = await app.db.prisma.$queryRaw<{ payload: { data: { optOuts: unknown } } }[]>`
      SELECT payload FROM deliveries WHERE payload->>'type' = 'contact.updated' AND payload->'data'->>'id' = ${id}`;
    expect(events).toHaveLength(2);
    for (const event of events) expect(event.payload.data.optOuts).toEqual(expected);

    const gql = await postOperation(app, ws.host, bearer(ws.apiKey), {
      query: `query($id: ID!) { contact(id: $id) { optOuts { channelId at source } } contacts(first: 5) { edges { node { id optOuts { source } } } } }`,
      variables: { id },
    });
    expect(gql.errors).toBeUndefined();
    expect(gql.data.contact.optOuts).toEqual(expected);
    expect(gql.data.contacts.edges[0].node.optOuts).toEqual([{ source: 'keyword' }, { source: 'provider' }]);
  });
});
