// `npm run demo:whatsapp`: a whole WhatsApp round trip offline. The gateway runs on an in-memory
// database beside a local stand-in for Meta's Graph API (test/helpers/whatsapp-fake.ts); a message
// sent through the API goes to the stand-in, which reports it sent, delivered and read, and answers
// with a reply that comes back through a signed webhook, into GraphQL's messageAdded.
import { createChannel } from '../src/modules/channels/channels.service.js';
import { createTemplate } from '../src/modules/templates/templates.service.js';
import { createWorkspace } from '../src/modules/workspaces/workspaces.service.js';
import { STAND_IN_PROVIDER, startDemoGateway } from './demo-gateway.js';

const PHONE = '+31612345678';

const gateway = await startDemoGateway({
  env: {},
  setup: async (db, sealer) => {
    const workspace = await createWorkspace(db.prisma, { hostname: 'localhost', name: 'WhatsApp demo' });
    const { channel, apiKey } = await createChannel(
      db.prisma,
      { workspaceId: workspace.id, name: 'Demo WhatsApp', type: 'whatsapp', provider: STAND_IN_PROVIDER },
      sealer,
    );
    await createTemplate(db.prisma, {
      workspaceId: workspace.id,
      channelId: channel.id,
      name: 'welcome',
      language: 'en_US',
      body: 'Hello {{1}}, thanks for trying the Connect gateway!',
      status: 'approved',
    });
    return { channelId: channel.id, apiKey };
  },
  answers: {
    statusDelayMs: 700,
    answerDelayMs: 700,
    answer: async () => ({ name: 'Demo Person', text: 'Thanks! This reply came back through a signed WhatsApp webhook.' }),
    log: (line) => console.log(line),
  },
});
const { apiKey } = gateway.setup;
const base = gateway.url;
const fake = gateway.fake;

const body = JSON.stringify({ to: { phone: PHONE, name: 'Demo Person' }, type: 'template', template: { name: 'welcome', parameters: ['Demo Person'] } });
process.stdout.write(`
WhatsApp demo: the gateway at ${base}, WhatsApp's Graph API played by a local stand-in at ${fake.url}.
Nothing leaves this machine.

1. Open ${base}/graphql, paste in the Headers tab:
     {"Authorization": "Bearer ${apiKey}"}
   and run:
     subscription { messageAdded { direction status body sender { type name } } }

2. Send a template message to ${PHONE} (outside WhatsApp's 24-hour window only templates may go):
     curl -s -H 'Authorization: Bearer ${apiKey}' -H 'Content-Type: application/json' \\
       -d '${body}' ${base}/api/connect/messages

3. Watch: the stand-in takes it, reports it sent, delivered and read, and Demo Person replies.
   Then list the conversation's messages, statuses included:
     curl -s -H 'Authorization: Bearer ${apiKey}' ${base}/api/connect/messages

Ctrl-C stops the demo.
`);

process.on('SIGINT', () => void gateway.stop());
