import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { PrismaClient } from '../generated/prisma/client.js';
import { privateTargets, publicUrl, type Env } from '../env.js';
import type { Sealer } from '../lib/sealed.js';
import { inboundUrl, providerConfig, providerFlags, providerSchema } from '../modules/channels/providers.schemas.js';
import { DEFAULT_PROVIDER, PROVIDERS, findProvider } from '../providers/registry.js';
import { openProviderSecrets } from '../modules/channels/channel-secrets.js';
import { requireSealer, resealSecrets } from '../modules/secrets/secrets.service.js';
import { InputError, ValidationError } from '../errors/domain.js';
import { OutboundTargetError, checkTarget, withoutCredentials, type Resolver } from '../lib/outbound-http.js';
import { hostnameSchema, labelSchema } from '../modules/workspaces/workspaces.schemas.js';
import { createWorkspace, workspaceByHostname } from '../modules/workspaces/workspaces.service.js';
import { createUser } from '../modules/users/users.service.js';
import { channelTypeSchema, webhookUrlSchema } from '../modules/channels/channels.schemas.js';
import { MAX_RATE_PER_SECOND, channelById, configureChannel, createChannel, deactivateChannel, rotateWebhookSecret, setChannelMaxRate } from '../modules/channels/channels.service.js';
import { createConnection, issueChannelKey, revokeToken } from '../modules/credentials/credentials.service.js';
import { findSessions, revokeSessions, sessionUser, sessionView } from '../modules/sessions/sessions.service.js';
import type { CredentialInvalidation } from '../context/credential-invalidation.js';
import { isUuid } from '../lib/uuid.js';
import { templateLanguageSchema, templateStatusSchema } from '../modules/templates/templates.schemas.js';
import { createTemplate } from '../modules/templates/templates.service.js';
import { contactEmailSchema, contactNameSchema } from '../modules/contacts/contacts.schemas.js';
import { deleteContact, importContact } from '../modules/contacts/contacts.service.js';
import { WEBHOOK_EVENTS, webhookEventSchema } from '../modules/webhooks/webhooks.schemas.js';
import { createWebhook, deleteWebhook, listWebhooks } from '../modules/webhooks/webhooks.service.js';
import { registerDocuments, setTrustedDocumentsOnly } from '../modules/documents/documents.service.js';
import { watchBroadcast } from './broadcast-watch.js';
import { importExitCode, importFile } from './contacts-import.js';
import { IMPORT_BATCH_MAX } from '../modules/contacts/contacts.import.js';
import type { AdminIo } from './io.js';

type FlagKind = 'string' | 'boolean';

/** What a command may need beyond the database. */
export interface AdminContext {
  env: Env;
  /** Seals and opens stored secrets; null on PostgreSQL without SECRETS_KEY. */
  sealer: Sealer | null;
  /** Resolves host names when a command checks an outbound target (the system's DNS unless given). */
  resolve?: Resolver;
  /** Where a command that reports as it goes writes (a progress bar, progress lines); its result is still printed on stdout. */
  io?: AdminIo;
}

/** Refuses a target URL the delivery would refuse (docs/operating-safely.md, Outbound targets), as one line naming the flag. */
async function checkOutboundTarget(flag: string, url: string, context: AdminContext): Promise<void> {
  try {
    await checkTarget(url, privateTargets(context.env), context.resolve);
  } catch (error) {
    if (error instanceof OutboundTargetError) throw new InputError(`--${flag} refused: ${error.message}`);
    throw error;
  }
}

export interface AdminCommand<T = any, R = any> {
  summary: string;
  flags: Record<string, FlagKind>;
  /** Validates the parsed flags (keys as written on the command line, e.g. `webhook-url`). */
  input: z.ZodType<T>;
  run(prisma: PrismaClient, input: T, context: AdminContext): Promise<R>;
  /**
   * What a successful run changed that running servers may hold in their credential caches:
   * announced to them through Redis, so that they stop trusting their copies at once.
   */
  invalidates?(input: T, result: R): CredentialInvalidation | null;
  /** The object printed, when it is not the result itself (which then carries what `invalidates` needs). */
  print?(result: R): unknown;
  /** The exit code of a run that printed its result: 0 unless the result says part of the work was not done. */
  exitCode?(result: R): number;
}

const seconds = z
  .string()
  .regex(/^\d+$/, 'must be a whole number of seconds')
  .transform(Number)
  .pipe(z.number().int().min(1, 'must be at least 1').max(10 * 365 * 86400, 'must be at most ten years'));
const id = z.string().trim().min(1, 'is required');
/** `--max-rate`: whole messages a second, or `default` (also `null`) for the provider's default. */
const maxRate = z
  .string()
  .trim()
  .refine((value) => /^(default|null)$/i.test(value) || (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= MAX_RATE_PER_SECOND), {
    message: `must be a whole number of messages a second from 1 to ${MAX_RATE_PER_SECOND}, or default`,
  })
  .transform((value) => (/^\d+$/.test(value) ? Number(value) : null));
const emailFlag = z.string().trim().max(255, 'must be at most 255 characters').pipe(z.email({ error: 'must be a valid email address' }));

/** A comma-separated flag value as a list of its non-blank parts. */
const commaList = z.string().transform((value) => value.split(',').map((part) => part.trim()).filter(Boolean));

const OLDEST_FIRST = [{ createdAt: 'asc' as const }, { id: 'asc' as const }];

/** Every provider setting as a string flag; which belong to the chosen provider is checked by providerConfig. */
const PROVIDER_FLAGS = providerFlags();
const providerFlagTypes = Object.fromEntries(PROVIDER_FLAGS.map((flag) => [flag, 'string' as const]));
const providerFlagSchemas = Object.fromEntries(PROVIDER_FLAGS.map((flag) => [flag, z.string().optional()])) as Record<string, z.ZodOptional<z.ZodString>>;
/** `--provider` with every listed provider's name, and each provider's flags, for the commands' help. */
const PROVIDER_NAMES = PROVIDERS.map((descriptor) => descriptor.name).join('|');
const PROVIDER_HELP = PROVIDERS.filter((descriptor) => descriptor.cliHelp)
  .map((descriptor) => `[${descriptor.cliHelp}]`)
  .join(' ');

function define<T, R>(command: AdminCommand<T, R>): AdminCommand<T, R> {
  return command;
}

export const commands: Record<string, AdminCommand> = {
  'workspace:create': define({
    summary: '--hostname H --name N',
    flags: { hostname: 'string', name: 'string' },
    input: z.object({ hostname: hostnameSchema, name: labelSchema }),
    async run(prisma, input) {
      const workspace = await createWorkspace(prisma, input);
      return { id: workspace.id, hostname: workspace.hostname, name: workspace.name };
    },
  }),

  'user:create': define({
    summary: '--hostname H --name N --email E',
    flags: { hostname: 'string', name: 'string', email: 'string' },
    input: z.object({ hostname: hostnameSchema, name: labelSchema, email: emailFlag }),
    async run(prisma, input) {
      const workspace = await workspaceByHostname(prisma, input.hostname);
      const user = await createUser(prisma, { workspaceId: workspace.id, name: input.name, email: input.email });
      return { id: user.id, name: user.name, email: user.email };
    },
  }),

  'channel:create': define({
    summary: `--hostname H --name N [--type whatsapp|sms|email|webchat] [--webhook-url U] [--provider ${PROVIDER_NAMES}] ${PROVIDER_HELP}`,
    flags: { hostname: 'string', name: 'string', type: 'string', 'webhook-url': 'string', provider: 'string', ...providerFlagTypes },
    input: z.object({
      hostname: hostnameSchema,
      name: labelSchema,
      type: channelTypeSchema.default('whatsapp'),
      'webhook-url': webhookUrlSchema.optional(),
      provider: providerSchema().default(DEFAULT_PROVIDER),
      ...providerFlagSchemas,
    }),
    async run(prisma, input, context) {
      const workspace = await workspaceByHostname(prisma, input.hostname);
      const config = providerConfig(findProvider(input.provider)!, input.type, input);
      if (!config.ok) throw new InputError(config.message);
      if (input['webhook-url'] && input.provider !== DEFAULT_PROVIDER) {
        throw new InputError(`--webhook-url is a setting of provider ${DEFAULT_PROVIDER}, not ${input.provider}`);
      }
      if (input['webhook-url']) await checkOutboundTarget('webhook-url', input['webhook-url'], context);
      const { channel, apiKey, webhookSecret } = await createChannel(
        prisma,
        {
          workspaceId: workspace.id,
          name: input.name,
          type: input.type,
          webhookUrl: input['webhook-url'],
          provider: { provider: input.provider, settings: config.settings, secrets: config.secrets },
        },
        context.sealer,
      );
      // The signing secret is shown only now, like the key; webhook receivers need it to verify deliveries.
      return {
        id: channel.id,
        name: channel.name,
        type: channel.type,
        apiKey,
        ...(webhookSecret ? { webhookSecret } : {}),
        provider: channel.provider,
        inboundUrl: inboundUrl(publicUrl(context.env), channel),
      };
    },
  }),

  'channel:configure': define({
    summary: `--channel ID (or --id ID) [--max-rate N|default] [--provider ${PROVIDER_NAMES}] and any of the provider's flags: ${PROVIDER_HELP}`,
    flags: { channel: 'string', id: 'string', 'max-rate': 'string', provider: 'string', ...providerFlagTypes },
    input: z
      .object({ channel: id.optional(), id: id.optional(), 'max-rate': maxRate.optional(), provider: providerSchema().optional(), ...providerFlagSchemas })
      .refine((input) => !(input.channel !== undefined && input.id !== undefined), { message: 'give the channel once: --channel or --id, not both' })
      .refine((input) => (input.channel ?? input.id) !== undefined, { message: 'is required', path: ['channel'] })
      .transform(({ id: alias, ...input }) => ({ ...input, channel: (input.channel ?? alias)! })),
    async run(prisma, input, context) {
      const channel = await channelById(prisma, input.channel);
      const provider = input.provider ?? channel.provider;
      const spec = findProvider(provider);
      if (!spec) throw new InputError(`channel ${channel.id} has provider ${channel.provider}, which this command cannot configure`);
      const current = { provider: channel.provider, settings: channel.providerSettings as Record<string, string>, secrets: openProviderSecrets(channel, context.sealer) };
      const { 'max-rate': rate, ...flags } = input;
      const config = providerConfig(spec, channel.type, flags, current);
      if (!config.ok) throw new InputError(config.message);
      const given = PROVIDER_FLAGS.filter((flag) => flags[flag as keyof typeof flags] !== undefined);
      const providerChange = given.length > 0 || provider !== channel.provider;
      if (!providerChange && rate === undefined) throw new InputError(`nothing to change: give --max-rate, --provider or a setting of provider ${provider}`);
      const updated = providerChange ? await configureChannel(prisma, channel.id, { provider, settings: config.settings, secrets: config.secrets }, context.sealer) : channel;
      if (rate === undefined) return { id: updated.id, provider: updated.provider };
      // After the provider change, so that `default` is the new provider's rate.
      const paced = await setChannelMaxRate(prisma, channel.id, rate);
      return { id: updated.id, provider: updated.provider, maxRatePerSecond: paced.ratePerSecond, maxRateIsDefault: paced.isDefault };
    },
    invalidates: (_input, result) => ({ channelId: result.id }),
  }),

  'channel:key': define({
    summary: '--channel ID [--expires-in-seconds S]',
    flags: { channel: 'string', 'expires-in-seconds': 'string' },
    input: z.object({ channel: id, 'expires-in-seconds': seconds.optional() }),
    async run(prisma, input) {
      const channel = await channelById(prisma, input.channel);
      const { token, expiresAt } = await issueChannelKey(prisma, channel, input['expires-in-seconds']);
      return { apiKey: token, expiresAt };
    },
  }),

  'channel:webhook-secret': define({
    summary: '--channel ID',
    flags: { channel: 'string' },
    input: z.object({ channel: id }),
    async run(prisma, input, context) {
      const { channel, secret } = await rotateWebhookSecret(prisma, input.channel, context.sealer);
      return { id: channel.id, webhookSecret: secret };
    },
    // Cached credentials carry their channels whole, the webhook secret included.
    invalidates: (_input, result) => ({ channelId: result.id }),
  }),

  'channel:deactivate': define({
    summary: '--channel ID',
    flags: { channel: 'string' },
    input: z.object({ channel: id }),
    async run(prisma, input) {
      const channel = await deactivateChannel(prisma, input.channel);
      return { id: channel.id, status: channel.status };
    },
    invalidates: (_input, result) => ({ channelId: result.id }),
  }),

  'connection:create': define({
    summary: '--hostname H --name N --channels ID,ID… [--expires-in-seconds S]',
    flags: { hostname: 'string', name: 'string', channels: 'string', 'expires-in-seconds': 'string' },
    input: z.object({
      hostname: hostnameSchema,
      name: labelSchema,
      channels: commaList.pipe(z.array(z.string()).min(1, 'must name at least one channel id')),
      'expires-in-seconds': seconds.optional(),
    }),
    async run(prisma, input) {
      const workspace = await workspaceByHostname(prisma, input.hostname);
      return createConnection(prisma, {
        workspaceId: workspace.id,
        name: input.name,
        channelIds: input.channels,
        expiresInSeconds: input['expires-in-seconds'],
      });
    },
  }),

  'token:revoke': define({
    summary: '--token T',
    flags: { token: 'string' },
    input: z.object({ token: z.string().trim().min(1, 'is required') }),
    async run(prisma, input) {
      // The sessions it minted are revoked with it.
      const { id } = await revokeToken(prisma, input.token);
      return { revoked: true, id };
    },
    invalidates: (_input, result) => ({ credentialId: result.id }),
    print: ({ revoked }) => ({ revoked }),
  }),

  'session:list': define({
    summary: '--hostname H',
    flags: { hostname: 'string' },
    input: z.object({ hostname: hostnameSchema }),
    async run(prisma, input) {
      const workspace = await workspaceByHostname(prisma, input.hostname);
      // Never a token: only its hash is stored.
      const sessions = await findSessions(prisma, { workspaceId: workspace.id, channelIds: null });
      return { sessions: sessions.map(sessionView) };
    },
  }),

  'session:revoke': define({
    summary: '--id ID | --user U [--hostname H]',
    flags: { id: 'string', user: 'string', hostname: 'string' },
    input: z
      .object({ id: id.optional(), user: id.optional(), hostname: hostnameSchema.optional() })
      .refine((value) => (value.id === undefined) !== (value.user === undefined), 'takes --id ID or --user U (one of them)'),
    async run(prisma, input) {
      if (input.id !== undefined) {
        const session = isUuid(input.id) ? await prisma.accessToken.findFirst({ where: { id: input.id.toLowerCase(), kind: 'session' }, select: { workspaceId: true } }) : null;
        const revoked = session ? await revokeSessions(prisma, { workspaceId: session.workspaceId, channelIds: null }, { sessionId: input.id }) : [];
        if (!revoked.length) throw new InputError(`No live session has id ${input.id}.`);
        return { revoked: 1, change: { credentialId: revoked[0]!.id } as CredentialInvalidation | null };
      }
      const user = await userByIdOrEmail(prisma, input.user!, input.hostname);
      const revoked = await revokeSessions(prisma, { workspaceId: user.workspaceId, channelIds: null }, { userId: user.id });
      return { revoked: revoked.length, change: revoked.length ? ({ userId: user.id } as CredentialInvalidation) : null };
    },
    invalidates: (_input, result) => result.change,
    print: ({ revoked }) => ({ revoked }),
  }),

  'template:create': define({
    summary: '--channel ID --name N --language L --body B [--status approved|pending|rejected]',
    flags: { channel: 'string', name: 'string', language: 'string', body: 'string', status: 'string' },
    input: z.object({
      channel: id,
      name: labelSchema,
      language: templateLanguageSchema,
      body: z.string().trim().min(1, 'must not be blank').max(4096, 'must be at most 4096 characters'),
      status: templateStatusSchema.default('approved'),
    }),
    async run(prisma, input) {
      const channel = await channelById(prisma, input.channel);
      const template = await createTemplate(prisma, {
        workspaceId: channel.workspaceId,
        channelId: channel.id,
        name: input.name,
        language: input.language,
        body: input.body,
        status: input.status,
      });
      return { id: template.id, name: template.name, language: template.language, status: template.status };
    },
  }),

  'contact:create': define({
    summary: '--hostname H --name N [--email E] [--phone-raw P] [--group]',
    flags: { hostname: 'string', name: 'string', email: 'string', 'phone-raw': 'string', group: 'boolean' },
    input: z.object({
      hostname: hostnameSchema,
      name: contactNameSchema,
      email: contactEmailSchema.optional(),
      'phone-raw': z.string().trim().min(1, 'must not be blank').max(64, 'must be at most 64 characters').optional(),
      group: z.boolean().default(false),
    }),
    async run(prisma, input) {
      const workspace = await workspaceByHostname(prisma, input.hostname);
      const contact = await importContact(prisma, {
        workspaceId: workspace.id,
        name: input.name,
        email: input.email,
        phoneRaw: input['phone-raw'],
        isGroup: input.group,
      });
      return { id: contact.id };
    },
  }),

  'contacts:import': define({
    summary: `--hostname H --file F.csv|F.ndjson|F.jsonl [--channel ID] [--batch-size N (1 to ${IMPORT_BATCH_MAX}, the default)]`,
    flags: { hostname: 'string', file: 'string', channel: 'string', 'batch-size': 'string' },
    input: z.object({
      hostname: hostnameSchema,
      file: z.string().trim().min(1, 'is required'),
      channel: id.optional(),
      'batch-size': z
        .string()
        .regex(/^\d+$/, 'must be a whole number of rows')
        .transform(Number)
        .pipe(z.number().int().min(1, 'must be at least 1').max(IMPORT_BATCH_MAX, `must be at most ${IMPORT_BATCH_MAX}`))
        .optional(),
    }),
    // Progress on stderr (a bar on a terminal); the summary on stdout; exit 3 when some rows failed, 130 when stopped.
    async run(prisma, input, context) {
      const workspace = await workspaceByHostname(prisma, input.hostname);
      const channel = input.channel === undefined ? null : await channelById(prisma, input.channel);
      if (channel && channel.workspaceId !== workspace.id) throw new InputError(`Channel ${channel.id} is not a channel of ${input.hostname}.`);
      return importFile(prisma, {
        workspaceId: workspace.id,
        channelId: channel?.id ?? null,
        file: input.file,
        output: { ...(context.io?.terminal ? { terminal: context.io.terminal } : {}), line: (text) => context.io?.stderr(text) },
        onInterrupt: context.io?.onInterrupt,
        ...(input['batch-size'] ? { batchSize: input['batch-size'] } : {}),
      });
    },
    exitCode: importExitCode,
  }),

  'contact:delete': define({
    summary: '--id ID',
    flags: { id: 'string' },
    input: z.object({ id }),
    async run(prisma, input) {
      await deleteContact(prisma, input.id);
      return { id: input.id, deleted: true };
    },
  }),

  'webhook:create': define({
    summary: '--hostname H --url U [--events E,E…]',
    flags: { hostname: 'string', url: 'string', events: 'string' },
    input: z.object({
      hostname: hostnameSchema,
      url: webhookUrlSchema,
      events: commaList.pipe(z.array(webhookEventSchema).min(1, 'must name at least one event')).optional(),
    }),
    async run(prisma, input, context) {
      const workspace = await workspaceByHostname(prisma, input.hostname);
      await checkOutboundTarget('url', input.url, context);
      const { endpoint, secret } = await createWebhook(prisma, { workspaceId: workspace.id, url: input.url, events: input.events ?? [] }, context.sealer);
      return { id: endpoint.id, url: endpoint.url, events: eventsOf(endpoint.events), secret };
    },
  }),

  'webhook:list': define({
    summary: '--hostname H',
    flags: { hostname: 'string' },
    input: z.object({ hostname: hostnameSchema }),
    async run(prisma, input) {
      const workspace = await workspaceByHostname(prisma, input.hostname);
      const webhooks = await listWebhooks(prisma, workspace.id);
      return { webhooks: webhooks.map((w) => ({ id: w.id, url: withoutCredentials(w.url), events: eventsOf(w.events) })) };
    },
  }),

  'workspace:configure': define({
    summary: '--hostname H --trusted-documents-only on|off',
    flags: { hostname: 'string', 'trusted-documents-only': 'string' },
    input: z.object({
      hostname: hostnameSchema,
      'trusted-documents-only': z.string().pipe(z.enum(['on', 'off'], { error: 'must be on or off' })),
    }),
    async run(prisma, input) {
      const workspace = await workspaceByHostname(prisma, input.hostname);
      const updated = await setTrustedDocumentsOnly(prisma, workspace.id, input['trusted-documents-only'] === 'on');
      return { id: updated.id, hostname: updated.hostname, trustedDocumentsOnly: updated.trustedDocumentsOnly };
    },
    // Cached credentials carry their workspace, and with it this switch.
    invalidates: (_input, result) => ({ workspaceId: result.id }),
  }),

  'graphql:documents': define({
    summary: '--hostname H --file persisted-documents.json',
    flags: { hostname: 'string', file: 'string' },
    input: z.object({ hostname: hostnameSchema, file: z.string().trim().min(1, 'is required') }),
    async run(prisma, input) {
      const workspace = await workspaceByHostname(prisma, input.hostname);
      const text = await readFile(input.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
        throw new InputError(`cannot read --file ${input.file}: ${error.code ?? error.message}`);
      });
      let manifest: unknown;
      try {
        manifest = JSON.parse(text);
      } catch (error) {
        throw new InputError(`--file ${input.file} is not JSON: ${(error as Error).message}`);
      }
      // The schema is built only for the command that checks documents against it.
      const [{ documentChecker }, { schema }] = await Promise.all([import('../graphql/document-check.js'), import('../schema.js')]);
      const documentProblem = documentChecker(schema);
      try {
        return { stored: await registerDocuments(prisma, workspace.id, manifest, documentProblem) };
      } catch (error) {
        // One line naming every refused document, as the REST answer does.
        if (error instanceof ValidationError) {
          throw new InputError(`nothing stored: ${Object.entries(error.errors).map(([key, messages]) => `${key}: ${messages.join(' ')}`).join('; ')}`);
        }
        throw error;
      }
    },
  }),

  'workspace:list': define({
    summary: '',
    flags: {},
    input: z.object({}),
    async run(prisma) {
      const workspaces = await prisma.workspace.findMany({ orderBy: [{ hostname: 'asc' }] });
      return { workspaces: workspaces.map((w) => ({ id: w.id, hostname: w.hostname, name: w.name })) };
    },
  }),

  'channel:list': define({
    summary: '--hostname H',
    flags: { hostname: 'string' },
    input: z.object({ hostname: hostnameSchema }),
    async run(prisma, input, context) {
      const workspace = await workspaceByHostname(prisma, input.hostname);
      const channels = await prisma.channel.findMany({ where: { workspaceId: workspace.id }, orderBy: OLDEST_FIRST });
      // No secrets: the signing secret is shown at creation and by channel:webhook-secret only.
      const base = publicUrl(context.env);
      return {
        channels: channels.map((c) => ({
          id: c.id,
          name: c.name,
          type: c.type,
          status: c.status,
          webhookUrl: c.webhookUrl && withoutCredentials(c.webhookUrl),
          provider: c.provider,
          // Only the settings that may be shown: credentials are sealed and never listed.
          settings: c.providerSettings,
          inboundUrl: inboundUrl(base, c),
        })),
      };
    },
  }),

  'template:list': define({
    summary: '--channel ID',
    flags: { channel: 'string' },
    input: z.object({ channel: id }),
    async run(prisma, input) {
      const channel = await channelById(prisma, input.channel);
      const templates = await prisma.channelTemplate.findMany({ where: { channelId: channel.id }, orderBy: OLDEST_FIRST });
      return { templates: templates.map((t) => ({ id: t.id, name: t.name, language: t.language, status: t.status })) };
    },
  }),

  'user:list': define({
    summary: '--hostname H',
    flags: { hostname: 'string' },
    input: z.object({ hostname: hostnameSchema }),
    async run(prisma, input) {
      const workspace = await workspaceByHostname(prisma, input.hostname);
      const users = await prisma.user.findMany({ where: { workspaceId: workspace.id }, orderBy: OLDEST_FIRST });
      return { users: users.map((u) => ({ id: u.id, name: u.name, email: u.email })) };
    },
  }),

  'broadcast:watch': define({
    summary: '--id ID',
    flags: { id: 'string' },
    input: z.object({ id }),
    // A bar on a terminal, one line a second otherwise (on stderr); the broadcast's view on stdout once it has ended.
    run: (prisma, input, context) =>
      watchBroadcast(prisma, input.id, { ...(context.io?.terminal ? { terminal: context.io.terminal } : {}), line: (text) => context.io?.stderr(text) }),
  }),

  'inbound:reprocess': define({
    summary: '--channel ID [--since ISO-8601]',
    flags: { channel: 'string', since: 'string' },
    input: z.object({
      channel: id,
      since: z.iso.datetime({ offset: true, error: 'must be a date and time such as 2026-11-20T00:00:00Z' }).transform((value) => new Date(value)).optional(),
    }),
    async run(prisma, input) {
      const channel = await channelById(prisma, input.channel);
      // Processing is idempotent (messages once, statuses forward only): queueing an event again is safe.
      const queued = await prisma.$executeRaw`
        INSERT INTO deliveries (id, workspace_id, inbound_event_id)
        SELECT gen_random_uuid(), workspace_id, id FROM inbound_events
         WHERE channel_id = ${channel.id}::uuid AND received_at >= ${input.since ?? new Date(0)}::timestamptz`;
      return { queued };
    },
  }),

  'secrets:rotate': define({
    summary: '',
    flags: {},
    input: z.object({}),
    async run(prisma, _input, context) {
      // Every secret sealed with SECRETS_KEY_PREVIOUS (or not sealed) is sealed again with SECRETS_KEY.
      return resealSecrets(prisma, requireSealer(context.sealer));
    },
  }),

  'webhook:delete': define({
    summary: '--id ID',
    flags: { id: 'string' },
    input: z.object({ id }),
    async run(prisma, input) {
      await deleteWebhook(prisma, input.id);
      return { id: input.id, deleted: true };
    },
  }),
};

/**
 * A workspace user named by id, or by email (without regard to case) within `--hostname` when
 * given; an email two workspaces share needs the hostname.
 */
async function userByIdOrEmail(prisma: PrismaClient, idOrEmail: string, hostname: string | undefined) {
  if (hostname !== undefined) {
    const workspace = await workspaceByHostname(prisma, hostname);
    try {
      return { ...(await sessionUser(prisma, workspace.id, idOrEmail, 'user')), workspaceId: workspace.id };
    } catch {
      throw new InputError(`No user of ${hostname} has id or email ${idOrEmail}.`);
    }
  }
  const key = idOrEmail.trim().toLowerCase();
  const users = await prisma.user.findMany({ where: isUuid(key) ? { id: key } : { emailNormalized: key }, select: { id: true, workspaceId: true }, take: 2 });
  if (!users.length) throw new InputError(`No user has id or email ${idOrEmail}.`);
  if (users.length > 1) throw new InputError(`Users of several workspaces have email ${idOrEmail}: name the workspace with --hostname.`);
  return users[0]!;
}

/** An endpoint stored with no event list receives every event. */
function eventsOf(stored: string[]): string[] {
  return stored.length ? stored : [...WEBHOOK_EVENTS];
}
