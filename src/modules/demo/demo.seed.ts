import type { PrismaClient } from '../../generated/prisma/client.js';
import { createChannel } from '../channels/channels.service.js';
import { createTemplate } from '../templates/templates.service.js';
import { createUser } from '../users/users.service.js';
import { createWorkspace } from '../workspaces/workspaces.service.js';
import { pino } from 'pino';
import { receiveMessage } from '../inbound/inbound.service.js';

export const DEMO_HOSTNAME = 'localhost';
export const DEMO_USER_EMAIL = 'agent@demo.localhost';

export interface DemoSeed {
  workspaceId: string;
  channelId: string;
  apiKey: string;
}

/** A demo workspace created earlier, with its first active channel if it has one. */
export interface ExistingDemo {
  workspaceId: string;
  channelId: string | null;
}

/** Contacts who wrote in before the demo started: their replies are the inbox's unread conversations. */
const DEMO_REPLIES = [
  { name: 'Ada King', phone: '+31612340001', texts: ['Hi! Is my order on its way?', 'It was order 1042.'] },
  { name: 'Grace Hopper', phone: '+31612340002', texts: ['Can I change the delivery address?'] },
  { name: 'Alan Turing', phone: '+31612340003', texts: ['Thanks, all sorted.'] },
];

/**
 * Creates the demo workspace for hostname `localhost`: one channel with an API key,
 * one workspace user, one approved template, and a few conversations with unread
 * replies (one assigned to the user and labelled). Returns null when it already exists.
 */
export async function seedDemo(prisma: PrismaClient): Promise<DemoSeed | null> {
  if (await findDemo(prisma)) return null;
  let workspaceId: string;
  try {
    workspaceId = (await createWorkspace(prisma, { hostname: DEMO_HOSTNAME, name: 'Demo workspace' })).id;
  } catch (error) {
    // Another process sharing the database seeded it first.
    if (await findDemo(prisma)) return null;
    throw error;
  }
  const { channel, apiKey } = await createChannel(prisma, { workspaceId, name: 'Demo channel', type: 'whatsapp' });
  const user = await createUser(prisma, { workspaceId, name: 'Demo Agent', email: DEMO_USER_EMAIL });
  await createTemplate(prisma, {
    workspaceId,
    channelId: channel.id,
    name: 'welcome',
    language: 'en',
    body: 'Hello {{1}}, welcome to {{2}}!',
    status: 'approved',
  });
  const inbound = { prisma, logger: pino({ level: 'silent' }) };
  const start = Date.now() - 60 * 60 * 1000;
  let minute = 0;
  for (const [i, contact] of DEMO_REPLIES.entries()) {
    for (const [j, body] of contact.texts.entries()) {
      await receiveMessage(inbound, { id: channel.id, workspaceId, name: channel.name }, {
        kind: 'message',
        providerId: `demo.${i}.${j}`,
        from: { phone: contact.phone, name: contact.name },
        at: new Date(start + ++minute * 60_000),
        body,
        media: [],
      });
    }
  }
  const first = await prisma.conversation.findFirst({ where: { channelId: channel.id, contact: { phone: DEMO_REPLIES[0]!.phone } }, select: { id: true } });
  if (first) {
    await prisma.conversationStateChange.create({ data: { conversationId: first.id, type: 'assigned', actorType: 'user', actorUserId: user.id, actorName: user.name } });
    await prisma.conversation.update({ where: { id: first.id }, data: { assigneeId: user.id, labels: ['orders'] } });
  }
  return { workspaceId, channelId: channel.id, apiKey };
}

export async function findDemo(prisma: PrismaClient): Promise<ExistingDemo | null> {
  const workspace = await prisma.workspace.findUnique({ where: { hostname: DEMO_HOSTNAME } });
  if (!workspace) return null;
  const channel = await prisma.channel.findFirst({
    where: { workspaceId: workspace.id, status: 'active' },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return { workspaceId: workspace.id, channelId: channel?.id ?? null };
}

export interface BannerOptions {
  /** The address the server listens on (HOST) and its port. */
  host: string;
  port: number;
  graphiql: boolean;
  /** The embedded database is held by the server: admin commands need it stopped. */
  embedded: boolean;
}

/**
 * What a newcomer needs to make a first call. The workspace of a request is its
 * Host header, so the address must name `localhost`: the listening address
 * (127.0.0.1) reaches no workspace and answers 401.
 */
export function demoBanner(seed: DemoSeed, options: BannerOptions): string {
  const { base, hostHeader } = demoAddress(options.host, options.port);
  const graphiql = options.graphiql ? `GraphiQL: ${base}/graphql` : null;
  return [
    '',
    `Demo workspace "${DEMO_HOSTNAME}" created: channel ${seed.channelId}, workspace user ${DEMO_USER_EMAIL} (usable in "from").`,
    hostHeader
      ? `The Host header chooses the workspace: send -H '${hostHeader}' (without it, ${base} reaches no workspace and answers 401).`
      : `The Host header chooses the workspace: call ${base}, not http://${formatHost(literalAddress(options.host))}:${options.port}, which reaches no workspace (401).`,
    'Its API key is shown only now. Try it:',
    '',
    `  curl -H 'Authorization: Bearer ${seed.apiKey}' -H 'Accept: application/json'${hostHeader ? ` -H '${hostHeader}'` : ''} ${base}/api/connect/channels`,
    '',
    ...(graphiql ? [`${graphiql} (send the key as the Authorization header)`, ''] : []),
  ].join('\n');
}

/** On a later start: where the demo is, and how to get a key for it (the first one was shown once). */
export function demoReminder(demo: ExistingDemo, options: BannerOptions): string {
  const { base, hostHeader } = demoAddress(options.host, options.port);
  const command = demo.channelId
    ? `npm run admin -- channel:key --channel ${demo.channelId}`
    : `npm run admin -- channel:create --hostname ${DEMO_HOSTNAME} --name "Demo channel"`;
  const where = `${base}${hostHeader ? ` with -H '${hostHeader}'` : ''}${options.graphiql ? `, GraphiQL at ${base}/graphql` : ''}`;
  return [
    '',
    `Demo workspace "${DEMO_HOSTNAME}" (user ${DEMO_USER_EMAIL}) is served at ${where}; its API key was shown when it was created.`,
    `For a new key${options.embedded ? ', stop the server (it holds the embedded database), then' : ''} run: ${command}`,
    '',
  ].join('\n');
}

/** `http://localhost:PORT` when localhost reaches the server; otherwise its address plus a Host header. */
function demoAddress(host: string, port: number): { base: string; hostHeader: string | null } {
  const local = /^(127\.\d+\.\d+\.\d+|::1|localhost|0\.0\.0\.0|::)$/i.test(host);
  return local ? { base: `http://${DEMO_HOSTNAME}:${port}`, hostHeader: null } : { base: `http://${formatHost(host)}:${port}`, hostHeader: `Host: ${DEMO_HOSTNAME}` };
}

/** The numeric address a user would otherwise type for a loopback or wildcard listener. */
function literalAddress(host: string): string {
  if (host === '::') return '::1';
  return host === '0.0.0.0' || host.toLowerCase() === 'localhost' ? '127.0.0.1' : host;
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
