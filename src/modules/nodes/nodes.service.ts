import { Prisma } from '../../generated/prisma/client.js';
import type { RequestContext } from '../../context/types.js';
import { readableChannelIds } from '../../context/request.js';
import { ValidationError } from '../../errors/domain.js';
import { isUuid } from '../../lib/uuid.js';

/** The most ids one `nodes` lookup takes (docs/graphql.md). */
export const MAX_NODE_IDS = 100;

/** Where a node's id was found: the GraphQL type of its row. */
export type NodeKind = 'Contact' | 'Conversation' | 'Message' | 'Channel' | 'Template' | 'User';

/**
 * The kind of each id the caller may see, in one statement over every table a node is stored in,
 * each read by its primary key with the caller's visibility: the workspace's live contacts and
 * users; the conversations, messages and templates of the acting channel or, for a credential of
 * several channels that named none, of any of them (each object's own channel decides). Channels
 * are the ones the credential can act as, known without a statement. An id the caller cannot see
 * (another workspace's, a channel's outside the credential, a deleted contact's, no row's, a
 * malformed one) is absent.
 */
export async function identifyNodes(ctx: RequestContext, ids: readonly string[]): Promise<Map<string, NodeKind>> {
  if (ids.length > MAX_NODE_IDS) throw ValidationError.field('ids', `nodes takes at most ${MAX_NODE_IDS} ids; ${ids.length} were given.`);
  const channelIds = readableChannelIds(ctx.auth);
  const found = new Map<string, NodeKind>();
  const wanted = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
  if (!wanted.length) return found;
  for (const visible of ctx.auth.channels) if (wanted.includes(visible.id)) found.set(visible.id, 'Channel');
  const rest = wanted.filter((id) => !found.has(id));
  if (!rest.length) return found;
  const workspaceId = ctx.auth.workspace.id;
  const rows = await ctx.sql<{ kind: NodeKind; id: string }>(Prisma.sql`
    SELECT 'Contact' AS kind, id FROM contacts WHERE id = ANY(${rest}::uuid[]) AND workspace_id = ${workspaceId}::uuid AND deleted_at IS NULL
    UNION ALL
    SELECT 'Conversation', id FROM conversations WHERE id = ANY(${rest}::uuid[]) AND workspace_id = ${workspaceId}::uuid AND channel_id = ANY(${channelIds}::uuid[])
    UNION ALL
    SELECT 'Message', id FROM messages WHERE id = ANY(${rest}::uuid[]) AND workspace_id = ${workspaceId}::uuid AND channel_id = ANY(${channelIds}::uuid[])
    UNION ALL
    SELECT 'Template', id FROM channel_templates WHERE id = ANY(${rest}::uuid[]) AND workspace_id = ${workspaceId}::uuid AND channel_id = ANY(${channelIds}::uuid[])
    UNION ALL
    SELECT 'User', id FROM users WHERE id = ANY(${rest}::uuid[]) AND workspace_id = ${workspaceId}::uuid`);
  for (const row of rows) found.set(row.id, row.kind);
  return found;
}
