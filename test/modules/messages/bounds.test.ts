import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { edgeSetup } from '../../helpers/edges.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const setup = () => edgeSetup(app);

describe('media_urls', () => {
  const refused = ['https:///a.png', 'https://exa mple.com/a.png', 'https://example.com/a b.png', 'https://example.com/a.png\n', 'http://example.com/a.png', 'https:a.png', 'https://'];
  it.each(refused)('refuses %j', async (url) => {
    const s = await setup();
    const result = await s.send({ to: { phone: '+31612345030' }, message: 'hi', media_urls: ['https://example.com/ok.png', url] });
    expect(result.status).toBe(422);
    expect(Object.keys(result.body.errors)).toEqual(['media_urls.1']);
  });
  it('accepts the scheme in any case', async () => {
    const s = await setup();
    const result = await s.send({ to: { phone: '+31612345031' }, message: 'hi', media_urls: ['HTTPS://Example.com/a.png', 'Https://example.com/b.png?x=1'] });
    expect(result.status, JSON.stringify(result.body)).toBe(202);
    expect(result.body.data.message.mediaUrls).toEqual(['HTTPS://Example.com/a.png', 'Https://example.com/b.png?x=1']);
  });
});

describe('template sends are bounded like text messages', () => {
  it('a parameter over 4096 characters is a 422 on template.parameters.N', async () => {
    const s = await setup();
    const before = await s.counts();
    const result = await s.send({ to: { phone: '+31612345040' }, type: 'template', template: { name: 'order_ready', parameters: ['Ann', 'x'.repeat(4097)] } });
    expect(result.status).toBe(422);
    expect(result.body.errors).toEqual({ 'template.parameters.1': ['A template parameter must not be greater than 4096 characters.'] });
    expect(await s.counts()).toEqual(before);
  });
  it('a rendered body over 4096 characters is a 422 on template.parameters; 4096 is accepted', async () => {
    const s = await setup();
    const fixed = 'Hi , order  is ready.'.length;
    const over = await s.send({ to: { phone: '+31612345041' }, type: 'template', template: { name: 'order_ready', parameters: ['a'.repeat(4000), 'b'.repeat(4096 - 4000 - fixed + 1)] } });
    expect(over.status).toBe(422);
    expect(over.body.errors).toEqual({ 'template.parameters': ['The rendered template must not be greater than 4096 characters.'] });
    const exact = await s.send({ to: { phone: '+31612345041' }, type: 'template', template: { name: 'order_ready', parameters: ['a'.repeat(4000), 'b'.repeat(4096 - 4000 - fixed)] } });
    expect(exact.status, JSON.stringify(exact.body)).toBe(202);
    expect(Array.from(exact.body.data.message.body as string)).toHaveLength(4096);
  });
});
