// Walks through the client against a running gateway (its documents registered first, with
// examples/graphql-client/register.ts):
//   CONNECT_URL=http://localhost:4000 CONNECT_API_KEY=cak_… npx tsx examples/graphql-client/main.ts
import { subscriptionClient, type ConnectOptions } from './client.js';
import { getViewer, listContacts, onMessageAdded, sendMessage } from './operations.js';

const apiKey = process.env.CONNECT_API_KEY;
if (!apiKey) {
  process.stderr.write('Set CONNECT_API_KEY to a channel API key (the server prints one on its first start).\n');
  process.exit(1);
}
const options: ConnectOptions = {
  baseUrl: process.env.CONNECT_URL ?? 'http://localhost:4000',
  apiKey,
  ...(process.env.CONNECT_CHANNEL_ID ? { channelId: process.env.CONNECT_CHANNEL_ID } : {}),
};

const viewer = await getViewer(options);
console.log(`Acting as channel "${viewer.channel.name}" of workspace "${viewer.workspace.name}"`);

const client = subscriptionClient(options);
const added = onMessageAdded(client);
await added.connected;

const refused = await sendMessage(options, { message: 'Nobody to send this to' });
if (!refused.ok) for (const error of refused.userErrors) console.log(`Refused: ${error.field.join('.')}: ${error.message} (${error.code})`);

const sent = await sendMessage(options, { to: { name: 'Ada', email: 'ada@example.com' }, message: 'Hello from the typed client' });
if (!sent.ok) throw new Error(sent.userErrors.map((error) => error.message).join('; '));
console.log(`Sent message ${sent.message.id} (${sent.message.status})`);

for await (const message of added) {
  console.log(`Subscription: message ${message.id} from ${message.sender.type} "${message.sender.name}": ${message.body ?? message.placeholder}`);
  if (message.id === sent.message.id) break;
}
client.dispose();

const { contacts } = await listContacts(options, { first: 5 });
for (const contact of contacts) console.log(`Contact ${contact.name} <${contact.email ?? contact.phoneNumber}>`);
