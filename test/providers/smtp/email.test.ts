import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MIGRATIONS_DIR, migrate } from '../../../src/db/migrate.js';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import type { SMTPSentMessageInfo, SMTPTransportOptions } from 'nodemailer/lib/smtp-transport';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../../src/modules/delivery/delivery.worker.js';
import { emailStore } from '../../../src/modules/inbound/email.store.js';
import { startSmtpListener, type SmtpListener } from '../../../src/modules/inbound/smtp.listener.js';
import { inboundReceived } from '../../../src/metrics/process.js';
import { loadEnv } from '../../../src/env.js';
import { testSealer } from '../../helpers/secrets.js';
import { runAdminOn } from '../../helpers/admin.js';
import { uniqueHost } from '../../helpers/factories.js';
import { onPostgres } from '../../helpers/app.js';
import { bearer } from '../../helpers/factories.js';
import { appOnOwnDatabase, freshDatabase } from '../../helpers/fresh-database.js';
import { restClient } from '../../helpers/rest.js';
import { SMTP_SINK_LOGIN, emailWorkspace, startSmtpSink, type SmtpSink } from '../../helpers/smtp-fake.js';
import { appWorker, testProviders } from '../../helpers/worker.js';

/** docs/channels.md for `smtp` (email) channels: out through a local relay, in through the gateway's own SMTP listener. */

let sink: SmtpSink;
let app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
let listener: SmtpListener;
let worker: DeliveryWorker;

beforeAll(async () => {
  sink = await startSmtpSink();
  // The store is read when a mail is sent or an attachment asked for, by then the app exists.
  const email = {
    thread: (conversationId: string) => emailStore(app.db.prisma).thread(conversationId),
    raw: (channelId: string, eventId: string) => emailStore(app.db.prisma).raw(channelId, eventId),
  };
  app = await appOnOwnDatabase({ providers: testProviders({ email }) });
  worker = appWorker(app);
  worker.start();
  listener = await startSmtpListener({ db: app.db, logger: app.logger, host: '127.0.0.1', port: 0, onStored: () => worker.nudge() });
});
afterAll(async () => {
  await listener?.close();
  await worker?.stop();
  await app?.drop();
  await sink?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until<T>(probe: () => Promise<T | null | undefined | false>, what = 'condition', ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached in time`);
    await sleep(25);
  }
}

async function setup(options: { name?: string } = {}) {
  const ws = await emailWorkspace(app.db.prisma, { smtpUrl: sink.url, ...options });
  return { ...ws, api: restClient(app, ws.host, ws.apiKey) };
}
type Setup = Awaited<ReturnType<typeof setup>>;

/** A client of the gateway's SMTP listener (`port`), as a mail server delivering to it would be. */
function mailer(port = listener.port, extra: Partial<SMTPTransportOptions> = {}) {
  return nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, ...extra });
}

/** Sends `mail` to the listener; resolves with the error instead of throwing. */
async function deliver(mail: SendMailOptions, port?: number): Promise<SMTPSentMessageInfo | { error: any }> {
  const transport = mailer(port);
  try {
    return await transport.sendMail(mail);
  } catch (error) {
    return { error };
  } finally {
    transport.close();
  }
}

/** The inbound messages of a channel, oldest first, once there are `count`. */
function inboundOf(s: Setup, count = 1) {
  return until(async () => {
    const rows = await app.db.prisma.message.findMany({ where: { channelId: s.channel.id, direction: 'inbound' }, orderBy: { createdAt: 'asc' } });
    return rows.length >= count ? rows : null;
  }, `${count} inbound message(s)`);
}

/** A message as the REST API shows it to the channel. */
async function viewOf(s: Setup, id: string) {
  const page = await s.api.get('/messages?limit=100');
  expect(page.status).toBe(200);
  return page.body.data.find((message: { id: string }) => message.id === id);
}

/** The sink's mails for `address`, once there are `count`. */
function mailsTo(address: string, count = 1) {
  return until(async () => {
    const mails = sink.received.filter((mail) => mail.envelope.to.some((to) => to.toLowerCase() === address.toLowerCase()));
    return mails.length >= count ? mails : null;
  }, `${count} mail(s) to ${address}`);
}

/** What an SMTP server says to a bare client: the greeting, then the EHLO answer. */
async function ehlo(port: number): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  let said = '';
  socket.on('data', (chunk) => (said += chunk.toString()));
  await until(async () => /^220 /m.test(said), 'greeting');
  socket.write('EHLO client.example\r\n');
  await until(async () => /^250 /m.test(said), 'EHLO answer');
  socket.end('QUIT\r\n');
  return said;
}

async function counter(outcome: string): Promise<number> {
  const metric = await inboundReceived.get();
  return metric.values.find((value) => value.labels.provider === 'smtp' && value.labels.outcome === outcome)?.value ?? 0;
}

describe('outbound email', () => {
  it('sends one email per message: From the channel by name, To the contact, Message-ID under the from domain, the channel name as subject', async () => {
    const s = await setup({ name: 'Acme Support' });
    const sent = await s.api.post('/messages', { to: { email: 'ann@customer.example', name: 'Ann Example' }, message: 'Your order shipped.' });
    expect(sent.status).toBe(202);
    const [mail] = await mailsTo('ann@customer.example');
    expect(mail!.user).toBe(SMTP_SINK_LOGIN.user);
    expect(mail!.envelope).toEqual({ from: s.settings.fromAddress, to: ['ann@customer.example'] });
    const { parsed } = mail!;
    expect(parsed.from!.value).toEqual([{ name: 'Acme Support', address: s.settings.fromAddress }]);
    expect(parsed.to).toMatchObject({ value: [{ name: 'Ann Example', address: 'ann@customer.example' }] });
    expect(parsed.messageId).toBe(`<${sent.body.data.message.id}@acme.example>`);
    expect(parsed.subject).toBe('Acme Support');
    expect(parsed.inReplyTo).toBeUndefined();
    expect(parsed.references).toBeUndefined();
    expect(parsed.text!.trim()).toBe('Your order shipped.');
    const stored = await until(async () => {
      const row = await app.db.prisma.message.findUnique({ where: { id: sent.body.data.message.id }, include: { providerIds: true } });
      return row?.status === 'sent' ? row : null;
    }, 'sent');
    expect(stored.providerIds.map((part) => part.providerId)).toEqual([`${sent.body.data.message.id}@acme.example`]);
    expect(sink.received.filter((m) => m.envelope.to.includes('ann@customer.example'))).toHaveLength(1);
  });

  it('answers the latest inbound email: In-Reply-To, References and "Re:" its subject, never "Re: Re:"', async () => {
    const s = await setup();
    await deliver({
      from: 'Bob Buyer <bob@customer.example>',
      to: s.settings.inboundAddress,
      subject: 'Where is my parcel?',
      text: 'Hello, where is it?',
      messageId: '<q1@customer.example>',
      references: ['<root@customer.example>'],
      // Written a minute before the reply below: which is the latest never rests on the two sharing a second.
      date: new Date(Date.now() - 60_000),
    });
    const [first] = await inboundOf(s);
    const reply = await s.api.post('/messages', { to: first!.contactId, message: 'On its way.' });
    expect(reply.status).toBe(202);
    const [mail] = await mailsTo('bob@customer.example');
    expect(mail!.parsed.subject).toBe('Re: Where is my parcel?');
    expect(mail!.parsed.inReplyTo).toBe('<q1@customer.example>');
    expect(mail!.parsed.references).toEqual(['<root@customer.example>', '<q1@customer.example>']);
    expect(mail!.parsed.headers.get('references')).toEqual(['<root@customer.example>', '<q1@customer.example>']);

    await deliver({ from: 'bob@customer.example', to: s.settings.inboundAddress, subject: 'RE: Re: Where is my parcel?', text: 'Thanks', messageId: '<q2@customer.example>' });
    await inboundOf(s, 2);
    await s.api.post('/messages', { to: first!.contactId, message: 'You are welcome.' });
    const mails = await mailsTo('bob@customer.example', 2);
    expect(mails[1]!.parsed.subject).toBe('RE: Re: Where is my parcel?');
    expect(mails[1]!.parsed.inReplyTo).toBe('<q2@customer.example>');
    expect(mails[1]!.parsed.references).toBe('<q2@customer.example>');
  });

  it("sends a template's rendered text with the media URLs listed after it", async () => {
    const s = await setup();
    await app.db.prisma.channelTemplate.create({
      data: { workspaceId: s.workspace.id, channelId: s.channel.id, name: 'order_ready', language: 'en', body: 'Hi {{1}}, order {{2}} is ready.', parameterCount: 2 },
    });
    const sent = await s.api.post('/messages', {
      to: { email: 'cy@customer.example' },
      type: 'template',
      template: { name: 'order_ready', parameters: ['Cy', '42'] },
      media_urls: ['https://cdn.example.com/a.pdf', 'https://cdn.example.com/b.png'],
    });
    expect(sent.status).toBe(202);
    const [mail] = await mailsTo('cy@customer.example');
    expect(mail!.parsed.text!.trimEnd()).toBe('Hi Cy, order 42 is ready.\n\nhttps://cdn.example.com/a.pdf\nhttps://cdn.example.com/b.png');
  });

  it('retries a 451 reply and sends once; a 550 reply fails the message with its code and text, the password never shown', async () => {
    const s = await setup();
    sink.failNext(451);
    const retried = await s.api.post('/messages', { to: { email: 'dee@customer.example' }, message: 'Try me twice' });
    const row = await until(async () => {
      const found = await app.db.prisma.message.findUnique({ where: { id: retried.body.data.message.id } });
      return found?.status === 'sent' ? found : null;
    }, 'sent after a retry');
    expect(row.failureReason).toBeNull();
    expect(await mailsTo('dee@customer.example')).toHaveLength(1);
    const delivery = await app.db.prisma.delivery.findFirst({ where: { messageId: retried.body.data.message.id } });
    expect(delivery!.attempts).toBe(2);

    sink.failNext(550);
    const refused = await s.api.post('/messages', { to: { email: 'eve@customer.example' }, message: 'No such mailbox' });
    const failed = await until(async () => {
      const found = await app.db.prisma.message.findUnique({ where: { id: refused.body.data.message.id } });
      return found?.status === 'failed' ? found : null;
    }, 'failed');
    expect(failed.failureReason).toMatch(/^550: 550 Mailbox unavailable/);
    expect((await viewOf(s, refused.body.data.message.id)).failureReason).toBe(failed.failureReason);
    const failedDelivery = await app.db.prisma.delivery.findFirst({ where: { messageId: refused.body.data.message.id } });
    expect(failedDelivery!.attempts).toBe(1);
    expect(JSON.stringify([failed, failedDelivery])).not.toContain(SMTP_SINK_LOGIN.pass);
    expect(sink.received.some((mail) => mail.envelope.to.includes('eve@customer.example'))).toBe(false);
  });

  it('retries while the relay is unreachable, and never shows the password in the reason', async () => {
    const { freePort } = await import('../../helpers/server-process.js');
    const port = await freePort();
    const s = await emailWorkspace(app.db.prisma, { smtpUrl: `smtp://user:${encodeURIComponent(SMTP_SINK_LOGIN.pass)}@127.0.0.1:${port}` });
    const api = restClient(app, s.host, s.apiKey);
    const sent = await api.post('/messages', { to: { email: 'fay@customer.example' }, message: 'Anyone?' });
    const delivery = await until(async () => {
      const found = await app.db.prisma.delivery.findFirst({ where: { messageId: sent.body.data.message.id } });
      return found && found.attempts >= 1 && found.lastError ? found : null;
    }, 'a failed attempt');
    expect(delivery.status).toBe('pending');
    expect(delivery.lastError).toMatch(/SMTP relay failed \(ESOCKET\): connect ECONNREFUSED/);
    expect(delivery.lastError).not.toContain(SMTP_SINK_LOGIN.pass);
    expect((await app.db.prisma.message.findUnique({ where: { id: sent.body.data.message.id } }))!.status).toBe('queued');
    await app.db.prisma.delivery.update({ where: { id: delivery.id }, data: { status: 'failed' } });
  });

  it('refuses a recipient without an email address with 422 on the recipient field, storing nothing', async () => {
    const s = await setup();
    const refused = await s.api.post('/messages', { to: { phone: '+31612345678' }, message: 'Hello' });
    expect(refused.status).toBe(422);
    const message = 'This channel sends through email: the recipient needs an email address.';
    expect(refused.body).toEqual({ message, errors: { to: [message] } });
    expect(await app.db.prisma.message.count({ where: { channelId: s.channel.id } })).toBe(0);
    expect(await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } })).toBe(0);
  });
});

describe('inbound email', () => {
  it('stores a plain-text email: contact by address with its display name, Date header as createdAt, subject and ids kept', async () => {
    const s = await setup();
    const before = await counter('accepted');
    const answer = await deliver({
      from: '"Gil Garcia" <Gil@Customer.example>',
      to: s.settings.inboundAddress.toUpperCase(),
      subject: 'Hello there',
      text: 'Plain words.',
      messageId: '<plain-1@customer.example>',
      date: new Date('2026-11-20T10:00:00Z'),
    });
    expect('error' in answer ? answer.error : answer.response).toMatch(/^250 /);
    expect(await counter('accepted')).toBe(before + 1);
    const [message] = await inboundOf(s);
    expect(message).toMatchObject({ body: 'Plain words.', status: 'received', direction: 'inbound', senderType: 'contact', senderName: 'Gil Garcia' });
    // The Date header's second, at its last millisecond: the mail arrived later.
    expect(message!.createdAt.toISOString()).toBe('2026-11-20T10:00:00.999Z');
    expect(message!.providerMeta).toEqual({ messageId: 'plain-1@customer.example', references: [], subject: 'Hello there' });
    const contact = await app.db.prisma.contact.findUniqueOrThrow({ where: { id: message!.contactId } });
    // The domain as mailparser gives it (lowercased); matching is case-insensitive anyway.
    expect(contact).toMatchObject({ name: 'Gil Garcia', email: 'Gil@customer.example' });

    // The same sender in another case is the same contact; no Date header: the receipt time.
    const sentAt = Date.now();
    await deliver({ envelope: { from: 'gil@customer.example', to: [s.settings.inboundAddress] }, raw: 'From: gil@customer.example\r\nMessage-ID: <plain-2@customer.example>\r\n\r\nNo date.\r\n' });
    const [, second] = await inboundOf(s, 2);
    expect(second!.contactId).toBe(message!.contactId);
    expect(second!.conversationId).toBe(message!.conversationId);
    expect(Math.abs(second!.createdAt.getTime() - sentAt)).toBeLessThan(10_000);
    expect(await viewOf(s, second!.id)).toMatchObject({ body: 'No date.', status: 'received', media: [], sender: { type: 'contact', id: message!.contactId } });
  });

  it('converts an HTML-only email to text, and takes the text part of a multipart/alternative one', async () => {
    const s = await setup();
    await deliver({
      from: 'hal@customer.example',
      to: s.settings.inboundAddress,
      subject: 'HTML',
      html: '<html><body><h1>Order</h1><p>Hello <b>there</b>,<br>see <a href="https://shop.example/o/1">your order</a>.</p><img src="cid:x"></body></html>',
      messageId: '<html-1@customer.example>',
    });
    const [html] = await inboundOf(s);
    expect(html!.body).toContain('Hello there,\nsee your order [https://shop.example/o/1].');
    expect(html!.body).not.toMatch(/<|>/);

    await deliver({ from: 'hal@customer.example', to: s.settings.inboundAddress, text: 'The text part.', html: '<p>The <i>HTML</i> part.</p>', messageId: '<alt-1@customer.example>' });
    const [, alternative] = await inboundOf(s, 2);
    expect(alternative!.body.trim()).toBe('The text part.');
  });

  it('keeps at most 65 536 characters of the text', async () => {
    const s = await setup();
    await deliver({ from: 'ivy@customer.example', to: s.settings.inboundAddress, text: `${'é'.repeat(70_000)}`, messageId: '<long@customer.example>' });
    const [message] = await inboundOf(s);
    expect(Array.from(message!.body)).toHaveLength(65_536);
  });

  it('lists attachments as media and streams them from the stored email; an email with no text part is stored with an empty body', async () => {
    const s = await setup();
    const pdf = Buffer.from('%PDF-1.4 fake invoice bytes \x00\x01\x02');
    await deliver({
      from: 'jo@customer.example',
      to: s.settings.inboundAddress,
      text: 'Invoice attached.',
      attachments: [
        { filename: 'invoice.pdf', content: pdf, contentType: 'application/pdf' },
        { filename: 'note.txt', content: 'a note', contentType: 'text/plain' },
      ],
      messageId: '<att-1@customer.example>',
    });
    const [message] = await inboundOf(s);
    const view = await viewOf(s, message!.id);
    expect(view.body.trim()).toBe('Invoice attached.');
    expect(view.media).toEqual([
      { index: 0, contentType: 'application/pdf', filename: 'invoice.pdf' },
      { index: 1, contentType: 'text/plain', filename: 'note.txt' },
    ]);
    const file = await app.fetch(s.host, `/api/connect/messages/${message!.id}/media/0`, { headers: bearer(s.apiKey) });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await file.arrayBuffer())).toEqual(pdf);
    const note = await app.fetch(s.host, `/api/connect/messages/${message!.id}/media/1`, { headers: bearer(s.apiKey) });
    expect(await note.text()).toBe('a note');
    expect((await app.fetch(s.host, `/api/connect/messages/${message!.id}/media/2`, { headers: bearer(s.apiKey) })).status).toBe(404);

    // Only an attachment: no text at all.
    const raw = [
      'From: jo@customer.example',
      `To: ${s.settings.inboundAddress}`,
      'Message-ID: <bare-att@customer.example>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: application/octet-stream; name="data.bin"',
      'Content-Disposition: attachment; filename="data.bin"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('binary!').toString('base64'),
      '--b1--',
      '',
    ].join('\r\n');
    await deliver({ envelope: { from: 'jo@customer.example', to: [s.settings.inboundAddress] }, raw });
    const [, bare] = await inboundOf(s, 2);
    expect(bare!.body).toBe('');
    expect(bare!.media).toEqual([{ index: 0, contentType: 'application/octet-stream', filename: 'data.bin', ref: expect.any(String) }]);
    const bytes = await app.fetch(s.host, `/api/connect/messages/${bare!.id}/media/0`, { headers: bearer(s.apiKey) });
    expect(await bytes.text()).toBe('binary!');

    // The stored email is the only copy: without it the file cannot be handed over.
    const eventId = (bare!.media as { ref: string }[])[0]!.ref.split('/')[0]!;
    await app.db.prisma.delivery.deleteMany({ where: { inboundEventId: eventId } });
    await app.db.prisma.inboundEvent.delete({ where: { id: eventId } });
    const gone = await app.fetch(s.host, `/api/connect/messages/${bare!.id}/media/0`, { headers: bearer(s.apiKey) });
    expect(gone.status).toBe(502);
    expect(await gone.text()).not.toContain(eventId);
  });

  it('threads a reply by In-Reply-To to the conversation of the outbound message it answers, reopening it', async () => {
    const s = await setup();
    const sent = await s.api.post('/messages', { to: { email: 'kim@customer.example', name: 'Kim' }, message: 'We have news.' });
    await mailsTo('kim@customer.example');
    const outbound = await until(async () => {
      const row = await app.db.prisma.message.findUnique({ where: { id: sent.body.data.message.id } });
      return row?.status === 'sent' ? row : null;
    }, 'sent');
    expect((await s.api.post(`/conversations/${outbound.conversationId}/close`, {})).status).toBe(200);
    // A later conversation of the same contact, closed too: the untreaded fallback would reopen it.
    const later = await app.db.prisma.conversation.create({
      data: { workspaceId: s.workspace.id, channelId: s.channel.id, contactId: outbound.contactId, status: 'closed', closedAt: new Date(), createdAt: new Date(Date.now() + 1000) },
    });
    await deliver({
      from: 'kim@customer.example',
      to: s.settings.inboundAddress,
      subject: 'Re: Acme Support',
      text: 'Thanks for the news.',
      messageId: '<kim-reply@customer.example>',
      inReplyTo: `<${sent.body.data.message.id}@acme.example>`,
      references: [`<${sent.body.data.message.id}@acme.example>`],
    });
    const [reply] = await inboundOf(s);
    expect(reply!.conversationId).toBe(outbound.conversationId);
    expect(reply!.contactId).toBe(outbound.contactId);
    const conversation = await app.db.prisma.conversation.findUniqueOrThrow({ where: { id: outbound.conversationId } });
    expect(conversation.status).toBe('open');
    expect((await app.db.prisma.conversation.findUniqueOrThrow({ where: { id: later.id } })).status).toBe('closed');

    // Without a thread it would have gone to the latest conversation, as for WhatsApp.
    await s.api.post(`/conversations/${outbound.conversationId}/close`, {});
    await app.db.prisma.conversation.update({ where: { id: later.id }, data: { createdAt: new Date(Date.now() + 5000) } });
    await deliver({ from: 'kim@customer.example', to: s.settings.inboundAddress, text: 'New topic.', messageId: '<kim-new@customer.example>' });
    const [, fresh] = await inboundOf(s, 2);
    expect(fresh!.conversationId).toBe(later.id);
  });

  it('refuses a recipient that is no channel’s inbound address with 550, and stores a mail to two channels once for each', async () => {
    const a = await setup();
    const b = await setup();
    const before = await counter('not_found');
    const refused = await deliver({ from: 'lee@customer.example', to: 'nobody@in.acme.example', text: 'Hello?' });
    expect('error' in refused && refused.error.responseCode).toBe(550);
    expect(await counter('not_found')).toBe(before + 1);

    const events = await app.db.prisma.inboundEvent.count();
    const both = await deliver({ from: 'lee@customer.example', to: [a.settings.inboundAddress, b.settings.inboundAddress, a.settings.inboundAddress], text: 'To you both.', messageId: '<both@customer.example>' });
    expect('error' in both).toBe(false);
    const [toA] = await inboundOf(a);
    const [toB] = await inboundOf(b);
    expect(toA!.body.trim()).toBe('To you both.');
    expect(toB!.body.trim()).toBe('To you both.');
    expect(await app.db.prisma.inboundEvent.count()).toBe(events + 2);
    const stored = await app.db.prisma.inboundEvent.findFirstOrThrow({ where: { channelId: a.channel.id } });
    expect(stored.provider).toBe('smtp');
    expect(stored.headers).toEqual({ 'mail-from': 'lee@customer.example', 'rcpt-to': a.settings.inboundAddress });
  });

  it('advertises SIZE 10 MiB, no STARTTLS without a certificate, and refuses a larger email with 552, storing nothing', async () => {
    const said = await ehlo(listener.port);
    expect(said).toMatch(/^250[- ]SIZE 10485760\r?$/m);
    expect(said).not.toMatch(/STARTTLS/);
    expect(said).not.toMatch(/AUTH/);
    const s = await setup();
    const events = await app.db.prisma.inboundEvent.count();
    const before = await counter('too_large');
    const big = await deliver({ from: 'max@customer.example', to: s.settings.inboundAddress, text: 'x'.repeat(10 * 1024 * 1024 + 10) });
    expect('error' in big && big.error.responseCode).toBe(552);
    // Announced in MAIL FROM or found at the end of DATA: refused either way.
    const raw = `From: max@customer.example\r\n\r\n${'y'.repeat(10 * 1024 * 1024 + 10)}\r\n`;
    const unannounced = await deliver({ envelope: { from: 'max@customer.example', to: [s.settings.inboundAddress] }, raw });
    expect('error' in unannounced && unannounced.error.responseCode).toBe(552);
    expect(await counter('too_large')).toBeGreaterThan(before);
    expect(await app.db.prisma.inboundEvent.count()).toBe(events);
  });

  it('stores malformed MIME as one message and goes on taking mail', async () => {
    const s = await setup();
    const raw = [
      'From: Ned <ned@customer.example>',
      'Message-ID: <broken@customer.example>',
      'Content-Type: multipart/mixed; boundary="never-closed"',
      'Content-Transfer-Encoding: quantum',
      '',
      '--never-closed',
      'Content-Type: text/plain; charset=no-such-charset',
      'Content-Transfer-Encoding: base64',
      '',
      'this is not base64 @@@ but a half part',
      '--never-closed',
      'Content-Type: application/pdf',
      'Content-Disposition: attachment; filename*=bogus',
      '',
      '\x00\x01 truncated',
    ].join('\r\n');
    const answer = await deliver({ envelope: { from: 'ned@customer.example', to: [s.settings.inboundAddress] }, raw });
    expect('error' in answer).toBe(false);
    const [message] = await inboundOf(s);
    expect(message!.senderName).toBe('Ned');
    expect(message!.body).not.toContain('\u0000');
    expect(message!.media).toHaveLength(1);
    await deliver({ from: 'ned@customer.example', to: s.settings.inboundAddress, text: 'Still here.', messageId: '<after-broken@customer.example>' });
    const messages = await inboundOf(s, 2);
    expect(messages.filter((m) => m.body.trim() === 'Still here.')).toHaveLength(1);
    expect(messages.filter((m) => m.senderName === 'Ned')).toHaveLength(2);
  });

  it('stores one message for many copies of a Message-ID arriving at once, and for repeats of a mail without one', async () => {
    const s = await setup();
    const copies = await Promise.all(
      Array.from({ length: onPostgres ? 12 : 6 }, () =>
        deliver({ from: 'ola@customer.example', to: s.settings.inboundAddress, text: 'Once only.', messageId: '<dup@customer.example>' }),
      ),
    );
    expect(copies.every((copy) => !('error' in copy))).toBe(true);
    const events = await app.db.prisma.inboundEvent.count({ where: { channelId: s.channel.id } });
    expect(events).toBe(copies.length);
    await until(async () => (await app.db.prisma.delivery.count({ where: { inboundEvent: { channelId: s.channel.id }, status: 'pending' } })) === 0, 'all processed');
    expect(await app.db.prisma.message.count({ where: { channelId: s.channel.id } })).toBe(1);
    expect(await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } })).toBe(1);

    const raw = 'From: ola@customer.example\r\nSubject: no id\r\n\r\nNo Message-ID here.\r\n';
    for (let i = 0; i < 3; i++) await deliver({ envelope: { from: 'ola@customer.example', to: [s.settings.inboundAddress] }, raw });
    await until(async () => (await app.db.prisma.delivery.count({ where: { inboundEvent: { channelId: s.channel.id }, status: 'pending' } })) === 0, 'all processed');
    const messages = await app.db.prisma.message.findMany({ where: { channelId: s.channel.id }, include: { providerIds: true }, orderBy: { createdAt: 'asc' } });
    expect(messages).toHaveLength(2);
    expect(messages[1]!.providerIds[0]!.providerId).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('never lets a forged or colliding Message-ID hide a mail: another sender’s, or the gateway’s own outbound one (docs/operating-safely.md, Staying up)', async () => {
    const s = await setup();
    const processed = () => until(async () => (await app.db.prisma.delivery.count({ where: { inboundEvent: { channelId: s.channel.id }, status: 'pending' } })) === 0, 'all processed');
    // Someone else claims the Message-ID that Ola's next mail will carry, first.
    await deliver({ from: 'mallory@elsewhere.example', to: s.settings.inboundAddress, text: 'Squatting.', messageId: '<next-1@customer.example>' });
    await deliver({ from: 'ola@customer.example', to: s.settings.inboundAddress, text: 'The real one.', messageId: '<next-1@customer.example>' });
    // Ola claims the Message-ID of a message she never sent her: a mail with other content is no repeat of it.
    await deliver({ from: 'ola@customer.example', to: s.settings.inboundAddress, text: 'Another one, same id.', messageId: '<next-1@customer.example>' });
    await processed();
    const bodies = async () => (await app.db.prisma.message.findMany({ where: { channelId: s.channel.id }, orderBy: { createdAt: 'asc' } })).map((m) => m.body.trim());
    expect((await bodies()).sort()).toEqual(['Another one, same id.', 'Squatting.', 'The real one.']);

    // The gateway's own outbound Message-ID, claimed by a mail: the mail is stored, the outbound message untouched.
    const contact = (await app.db.prisma.message.findFirstOrThrow({ where: { channelId: s.channel.id, body: { startsWith: 'The real one.' } } })).contactId;
    const sent = await s.api.post('/messages', { to: contact, message: 'Our answer.' });
    const outboundId = sent.body.data.message.id as string;
    await until(async () => (await app.db.prisma.message.findUniqueOrThrow({ where: { id: outboundId } })).status === 'sent', 'sent');
    const { providerId: ownMessageId } = await app.db.prisma.providerMessageId.findFirstOrThrow({ where: { messageId: outboundId } });
    await deliver({ from: 'mallory@elsewhere.example', to: s.settings.inboundAddress, text: 'Pretending to be you.', messageId: `<${ownMessageId}>` });
    // A real repeat (same sender, Message-ID and content, delivered again) is still one message.
    await deliver({ from: 'ola@customer.example', to: s.settings.inboundAddress, text: 'The real one.', messageId: '<next-1@customer.example>' });
    await processed();
    expect((await bodies()).sort()).toEqual(['Another one, same id.', 'Our answer.', 'Pretending to be you.', 'Squatting.', 'The real one.']);
    expect(await app.db.prisma.providerMessageId.findMany({ where: { messageId: outboundId } })).toHaveLength(1);
    // Replies still thread by the Message-ID as written.
    const real = await app.db.prisma.message.findFirstOrThrow({ where: { channelId: s.channel.id, body: { startsWith: 'The real one.' } } });
    expect(real.providerMeta).toMatchObject({ messageId: 'next-1@customer.example' });
  });

  it('offers STARTTLS with a certificate and takes mail over it', async () => {
    const pems = await generate([{ name: 'commonName', value: 'mx.acme.example' }], { keySize: 2048, algorithm: 'sha256' });
    const secure = await startSmtpListener({
      db: app.db,
      logger: app.logger,
      host: '127.0.0.1',
      port: 0,
      tls: { cert: Buffer.from(pems.cert), key: Buffer.from(pems.private) },
      onStored: () => worker.nudge(),
    });
    try {
      expect(await ehlo(secure.port)).toMatch(/^250[- ]STARTTLS\r?$/m);
      const s = await setup();
      const transport = mailer(secure.port, { ignoreTLS: false, requireTLS: true, tls: { rejectUnauthorized: false } });
      // requireTLS: the mail goes only once STARTTLS succeeded.
      const info = await transport.sendMail({ from: 'pia@customer.example', to: s.settings.inboundAddress, text: 'Over TLS.', messageId: '<tls@customer.example>' });
      transport.close();
      expect(info.response).toMatch(/^250 /);
      const [message] = await inboundOf(s);
      expect(message!.body.trim()).toBe('Over TLS.');
    } finally {
      await secure.close();
    }
  });

  it('stops taking connections when closed, letting a mail in flight finish', async () => {
    const own = await startSmtpListener({ db: app.db, logger: app.logger, host: '127.0.0.1', port: 0, closeTimeoutMs: 2000 });
    const s = await setup();
    const transport = mailer(own.port);
    // A mail whose DATA began before the close is taken to its end.
    const socket = net.connect(own.port, '127.0.0.1');
    let said = '';
    socket.on('data', (chunk) => (said += chunk.toString()));
    await until(async () => /^220 /m.test(said), 'greeting');
    socket.write('EHLO client.example\r\n');
    await until(async () => /^250 /m.test(said), 'EHLO');
    socket.write(`MAIL FROM:<quinn@customer.example>\r\nRCPT TO:<${s.settings.inboundAddress}>\r\nDATA\r\n`);
    await until(async () => /^354 /m.test(said), 'DATA');
    socket.write('From: quinn@customer.example\r\nMessage-ID: <inflight@customer.example>\r\n\r\nIn ');
    const closed = own.close();
    await sleep(50);
    await expect(transport.sendMail({ from: 'late@customer.example', to: s.settings.inboundAddress, text: 'Too late.' })).rejects.toMatchObject({ code: 'ESOCKET' });
    socket.write('flight.\r\n.\r\n');
    await until(async () => /^250 .*stored/im.test(said), `stored (${JSON.stringify(said)})`);
    // Any further command of that session is refused: the listener is going away.
    socket.write('MAIL FROM:<quinn@customer.example>\r\n');
    await until(async () => /^421 /m.test(said), '421');
    await closed;
    const [message] = await inboundOf(s);
    expect(message!.body).toBe('In flight.');
    transport.close();
  });

  it('refuses a bad listener setting at start with one line: a port out of range, a certificate without its key, an unreadable certificate, a taken port', async () => {
    expect(() => loadEnv({ SMTP_INBOUND_PORT: '70000' })).toThrow(/^invalid configuration: SMTP_INBOUND_PORT: expected a port number from 0 to 65535$/);
    expect(() => loadEnv({ SMTP_INBOUND_TLS_CERT: '/etc/cert.pem' })).toThrow(/SMTP_INBOUND_TLS_CERT: needs SMTP_INBOUND_TLS_KEY too/);
    expect(loadEnv({ SMTP_INBOUND_PORT: '2525' }).SMTP_INBOUND_PORT).toBe(2525);
    const { startServer, freePort } = await import('../../helpers/server-process.js');
    const missing = startServer({ SMTP_INBOUND_PORT: String(await freePort()), SMTP_INBOUND_TLS_CERT: '/nonexistent/cert.pem', SMTP_INBOUND_TLS_KEY: '/nonexistent/key.pem', PGLITE_DIR: 'memory://', SEED_DEMO: '0' });
    const taken = startServer({ SMTP_INBOUND_PORT: String(listener.port), PGLITE_DIR: 'memory://', SEED_DEMO: '0' });
    expect(await missing.exited).toBe(1);
    expect(missing.stderr().trim().split('\n')).toEqual([expect.stringMatching(/^error: SMTP_INBOUND_TLS_CERT\/SMTP_INBOUND_TLS_KEY: ENOENT/)]);
    expect(await taken.exited).toBe(1);
    expect(taken.stderr().trim().split('\n')).toEqual([`error: SMTP_INBOUND_PORT: port ${listener.port} on 127.0.0.1 is already in use: stop the process using it, or set SMTP_INBOUND_PORT to another port`]);
  }, 60_000);

  it('starts and stops with the server on SMTP_INBOUND_PORT', async () => {
    const { startServer, freePort, accepts } = await import('../../helpers/server-process.js');
    const port = await freePort();
    const server = startServer({ SMTP_INBOUND_PORT: String(port), PGLITE_DIR: 'memory://', SEED_DEMO: '0' });
    try {
      await server.listening;
      await until(async () => server.output().includes(`inbound SMTP listening on 127.0.0.1:${port}`), 'SMTP listening');
      expect(await ehlo(port)).toMatch(/SIZE 10485760/);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      expect(await accepts(port)).toBe(false);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  }, 90_000);
});

describe('admin commands for email channels', () => {
  /** Runs an admin command in-process against the app's database. */
  const admin = (...argv: string[]) => runAdminOn(app.db, argv);
  const url = 'smtps://mailer%40acme.example:S3cr3t%2Fpass@smtp.acme.example:465';
  const flags = ['--type', 'email', '--provider', 'smtp', '--smtp-url', url, '--from-address', 'support@acme.example', '--inbound-address', 'Inbox@In.Acme.example'];

  it('creates an smtp channel: URL sealed, the inbound address printed, listed with the password masked', async () => {
    const hostname = uniqueHost('mailadmin');
    expect((await admin('workspace:create', '--hostname', hostname, '--name', 'Acme')).code).toBe(0);
    const created = await admin('channel:create', '--hostname', hostname, '--name', 'Mail', ...flags);
    expect(created.stderr).toBe('');
    expect(created.json).toEqual({
      id: expect.any(String),
      name: 'Mail',
      type: 'email',
      apiKey: expect.stringMatching(/^cak_/),
      provider: 'smtp',
      inboundUrl: 'inbox@in.acme.example',
    });
    const stored = await app.db.prisma.channel.findUniqueOrThrow({ where: { id: created.json.id } });
    expect(JSON.parse(testSealer.open(stored.providerSecrets!))).toEqual({ smtpUrl: url });
    const [row] = await app.db.prisma.$queryRaw<{ row: string }[]>`SELECT row_to_json(c)::text AS row FROM channels c WHERE id = ${created.json.id}::uuid`;
    expect(row!.row).not.toContain('S3cr3t');
    const listed = (await admin('channel:list', '--hostname', hostname)).json.channels.find((c: { id: string }) => c.id === created.json.id);
    expect(listed).toMatchObject({
      provider: 'smtp',
      settings: { fromAddress: 'support@acme.example', inboundAddress: 'inbox@in.acme.example', smtpUrl: 'smtps://mailer%40acme.example:***@smtp.acme.example:465' },
      inboundUrl: 'inbox@in.acme.example',
    });
    expect(JSON.stringify(listed)).not.toContain('S3cr3t');

    // Rotating the URL keeps the addresses, and the listing follows.
    const rotated = await admin('channel:configure', '--channel', created.json.id, '--smtp-url', 'smtp://relay.acme.example:2525');
    expect(rotated.json).toEqual({ id: created.json.id, provider: 'smtp' });
    const after = await app.db.prisma.channel.findUniqueOrThrow({ where: { id: created.json.id } });
    expect(after.providerSettings).toEqual({ fromAddress: 'support@acme.example', inboundAddress: 'inbox@in.acme.example', smtpUrl: 'smtp://relay.acme.example:2525' });
    expect(JSON.parse(testSealer.open(after.providerSecrets!))).toEqual({ smtpUrl: 'smtp://relay.acme.example:2525' });
  });

  it('refuses a bad SMTP URL or address, a missing flag or the wrong type with one line, creating nothing', async () => {
    const hostname = uniqueHost('mailadmin');
    await admin('workspace:create', '--hostname', hostname, '--name', 'Acme');
    const count = () => app.db.prisma.channel.count({ where: { workspace: { hostname } } });
    const at = (flag: string, value: string) => flags.map((item, i) => (flags[i - 1] === flag ? value : item));
    const cases: [string[], RegExp][] = [
      [at('--smtp-url', 'https://user:Hidden1@smtp.acme.example'), /^error: --smtp-url must be an smtp:\/\/ or smtps:\/\/ URL of the relay/],
      [at('--smtp-url', 'smtp://user:Hidden1@smtp.acme.example:99999'), /^error: --smtp-url must be an smtp/],
      [at('--from-address', 'not an address'), /^error: --from-address must be the sender address/],
      [at('--inbound-address', 'inbox'), /^error: --inbound-address must be the inbound address/],
      [flags.slice(0, -2), /^error: --inbound-address is required for provider smtp$/],
      [at('--type', 'sms'), /^error: --provider smtp carries email channels, not sms ones/],
    ];
    for (const [argv, message] of cases) {
      const result = await admin('channel:create', '--hostname', hostname, '--name', 'Mail', ...argv);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toContain('Hidden1');
    }
    expect(await count()).toBe(0);
  });

  it('gives an inbound address to one active channel, whatever its case: a second is refused with one line, and the database refuses it too', async () => {
    const shared = `Shared-${Date.now()}@In.Acme.example`;
    const [first, second] = [uniqueHost('mailone'), uniqueHost('mailtwo')];
    for (const hostname of [first, second]) await admin('workspace:create', '--hostname', hostname, '--name', 'Acme');
    const create = (hostname: string, inbound: string) =>
      admin('channel:create', '--hostname', hostname, '--name', 'Mail', ...flags.map((item, i) => (flags[i - 1] === '--inbound-address' ? inbound : item)));
    const holder = await create(first, shared);
    expect(holder.code).toBe(0);

    const refusal = `error: the inbound address ${shared.toLowerCase()} is already that of active channel ${holder.json.id}: an inbound address belongs to one active channel`;
    const again = await create(second, shared.toUpperCase());
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(refusal);
    expect(await app.db.prisma.channel.count({ where: { workspace: { hostname: second } } })).toBe(0);

    // Another channel configured onto the address: refused the same way, its own address kept.
    const other = await create(second, `elsewhere-${Date.now()}@in.acme.example`);
    expect(other.code).toBe(0);
    const moved = await admin('channel:configure', '--channel', other.json.id, '--inbound-address', shared);
    expect(moved.stderr).toBe(refusal);
    expect(((await app.db.prisma.channel.findUniqueOrThrow({ where: { id: other.json.id } })).providerSettings as Record<string, string>).inboundAddress).toMatch(/^elsewhere-/);
    // Reconfiguring the holder with its own address is no conflict.
    expect((await admin('channel:configure', '--channel', holder.json.id, '--inbound-address', shared)).code).toBe(0);

    // The database holds the rule whatever writes the row.
    await expect(
      app.db.prisma.channel.update({ where: { id: other.json.id }, data: { providerSettings: { fromAddress: 'support@acme.example', inboundAddress: shared.toLowerCase() } } }),
    ).rejects.toThrow();

    // A mail to it is stored once, for the channel that has it.
    const events = await app.db.prisma.inboundEvent.count();
    expect('error' in (await deliver({ from: 'lee@customer.example', to: shared, text: 'Whose?', messageId: `<whose-${Date.now()}@customer.example>` }))).toBe(false);
    expect(await app.db.prisma.inboundEvent.count()).toBe(events + 1);
    expect(await app.db.prisma.inboundEvent.count({ where: { channelId: holder.json.id } })).toBe(1);

    // Once the holder is deactivated, the address is free for another channel.
    expect((await admin('channel:deactivate', '--channel', holder.json.id)).code).toBe(0);
    expect((await admin('channel:configure', '--channel', other.json.id, '--inbound-address', shared)).code).toBe(0);
  });

  it('migrates a database whose channels share an address: the channel that had it first keeps it, the later ones lose it', async () => {
    const database = await freshDatabase();
    try {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
      fs.cpSync(MIGRATIONS_DIR, dir, { recursive: true });
      // The database as it stood before the rule: that migration and every later one are applied afterwards.
      for (const name of fs.readdirSync(dir)) {
        if (name >= '20261201000000_one_channel_per_inbound_address' && !name.endsWith('.toml')) fs.rmSync(path.join(dir, name), { recursive: true });
      }
      await database.db.withSession((session) => migrate(session, { dir }));
      fs.rmSync(dir, { recursive: true, force: true });
      const ids = ['00000000-0000-7000-8000-000000000001', '00000000-0000-7000-8000-000000000002', '00000000-0000-7000-8000-000000000003', '00000000-0000-7000-8000-000000000004'];
      await database.db.withSession((session) =>
        session.exec(`
          INSERT INTO workspaces (id, hostname, name) VALUES ('00000000-0000-7000-8000-0000000000aa', 'a.test', 'A'), ('00000000-0000-7000-8000-0000000000bb', 'b.test', 'B');
          INSERT INTO channels (id, workspace_id, name, type, provider, provider_settings, created_at) VALUES
            ('${ids[0]}', '00000000-0000-7000-8000-0000000000aa', 'first', 'email', 'smtp', '{"inboundAddress":"shared@in.example"}', '2026-01-01'),
            ('${ids[1]}', '00000000-0000-7000-8000-0000000000bb', 'later', 'email', 'smtp', '{"inboundAddress":"Shared@In.Example"}', '2026-02-01'),
            ('${ids[2]}', '00000000-0000-7000-8000-0000000000bb', 'own', 'email', 'smtp', '{"inboundAddress":"own@in.example"}', '2026-03-01');
          INSERT INTO channels (id, workspace_id, name, type, status, provider, provider_settings, created_at) VALUES
            ('${ids[3]}', '00000000-0000-7000-8000-0000000000aa', 'inactive', 'email', 'inactive', 'smtp', '{"inboundAddress":"shared@in.example"}', '2025-01-01');`),
      );
      await database.db.withSession((session) => migrate(session));
      const rows = await database.db.withSession((session) =>
        session.query<{ name: string; settings: Record<string, string> }>('SELECT name, provider_settings AS settings FROM channels ORDER BY created_at'),
      );
      expect(rows.map((row) => [row.name, row.settings.inboundAddress])).toEqual([
        ['inactive', 'shared@in.example'],
        ['first', 'shared@in.example'],
        ['later', undefined],
        ['own', 'own@in.example'],
      ]);
    } finally {
      await database.drop();
    }
  });
});
