import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { edgeSetup } from '../helpers/edges.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const setup = () => edgeSetup(app);

describe('null means absent', () => {
  it('on every optional field of a send', async () => {
    const s = await setup();
    const result = await s.send({
      to: { email: null, phone: '+31612345010', name: null },
      contact: null,
      sender: null,
      from: null,
      type: null,
      is_encrypted: null,
      silent: null,
      media_urls: null,
      template: null,
      message: 'hello',
    });
    expect(result.status, JSON.stringify(result.body)).toBe(202);
    expect(result.body.data.message).toMatchObject({ type: 'text', isEncrypted: false, silent: false, mediaUrls: [], sender: { type: 'channel' } });
  });

  it('inside a template and a recipient, and for a contact create', async () => {
    const s = await setup();
    const templated = await s.send({ contact: { phone: '+31612345011', email: null }, type: 'template', template: { name: 'order_ready', language: null, parameters: ['Ann', '42'] } });
    expect(templated.status, JSON.stringify(templated.body)).toBe(202);
    expect(templated.body.data.message.body).toBe('Hi Ann, order 42 is ready.');
    const created = await s.api.post('/contacts', { name: 'Ann', email: null, phone: '+31612345012' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });

  it('still clears email and phone on update', async () => {
    const s = await setup();
    const c = await s.contact({ email: 'clear@example.com', phone: '+31612345013' });
    const result = await s.api.patch(`/contacts/${c.id}`, { email: null });
    expect(result.status).toBe(200);
    expect(result.body.data.contact).toMatchObject({ email: null, phoneNumber: '+31612345013' });
  });
});
