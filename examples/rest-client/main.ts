// Walks through the client against a running gateway:
//   CONNECT_URL=http://localhost:4000 CONNECT_API_KEY=cak_… npx tsx examples/rest-client/main.ts
import { randomUUID } from 'node:crypto';
import { ConnectApiError, createConnectClient } from './client.js';
import { allContacts, closeConversation, findOrCreateContact, listChannels, reopenConversation, sendText, updateContact } from './operations.js';

const apiKey = process.env.CONNECT_API_KEY;
if (!apiKey) {
  process.stderr.write('Set CONNECT_API_KEY to a channel API key (the server prints one on its first start).\n');
  process.exit(1);
}
const client = createConnectClient({
  baseUrl: process.env.CONNECT_URL ?? 'http://localhost:4000',
  apiKey,
  ...(process.env.CONNECT_CHANNEL_ID ? { channelId: process.env.CONNECT_CHANNEL_ID } : {}),
});

for (const channel of await listChannels(client)) console.log(`Channel "${channel.name}" (${channel.type}, ${channel.status}) ${channel.id}`);

const { contact, created } = await findOrCreateContact(client, { name: 'Ada Lovelace', email: 'ada@example.com' });
console.log(`${created ? 'Created' : 'Found'} contact ${contact.name} <${contact.email}> ${contact.id}`);

try {
  await updateContact(client, contact.id, { email: 'not an email' });
} catch (error) {
  if (!(error instanceof ConnectApiError)) throw error;
  for (const [field, messages] of Object.entries(error.errors)) console.log(`Refused (${error.status}): ${field}: ${messages.join(' ')}`);
}
const renamed = await updateContact(client, contact.id, { name: 'Ada King' });
console.log(`Renamed to ${renamed.name}`);

// One key per message: repeating the call with it (after a timeout, say) cannot send twice.
const key = randomUUID();
const sent = await sendText(client, { to: contact.id, message: 'Hello from the typed REST client' }, key);
const again = await sendText(client, { to: contact.id, message: 'Hello from the typed REST client' }, key);
console.log(`Sent message ${sent.message.id} (${sent.message.status}); the retry ${again.replayed ? 'replayed' : 'sent'} ${again.message.id}`);

const closed = await closeConversation(client, sent.message.conversationId);
const reopened = await reopenConversation(client, closed.id);
console.log(`Conversation ${reopened.id}: ${reopened.stateChanges.map((change) => change.type).join(' → ')}`);

let count = 0;
for await (const each of allContacts(client, { pageSize: 10 })) {
  count += 1;
  console.log(`Contact ${each.name} <${each.email ?? each.phoneNumber}>`);
}
console.log(`${count} contact(s)`);
