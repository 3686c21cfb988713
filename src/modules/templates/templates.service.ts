import type { ChannelTemplate, PrismaClient, TemplateStatus } from '../../generated/prisma/client.js';
import { InputError } from '../../errors/domain.js';
import { isUniqueViolation } from '../../db/errors.js';
import { countParameters, type TemplateView } from './templates.schemas.js';
import type { RequestContext } from '../../context/types.js';
import type { PrismaQuery } from '../../db/query.js';
import { actingChannel } from '../../context/request.js';
import { NEWEST_FIRST, afterCursor, toPage, type Cursor, type Page } from '../../lib/pagination.js';

export async function createTemplate(
  prisma: PrismaClient,
  input: { workspaceId: string; channelId: string; name: string; language: string; body: string; status: TemplateStatus },
): Promise<ChannelTemplate> {
  const parameters = countParameters(input.body);
  if ('error' in parameters) throw new InputError(`--body: ${parameters.error}.`);
  try {
    return await prisma.channelTemplate.create({ data: { ...input, parameterCount: parameters.count } });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new InputError(`The channel already has a template ${input.name} in ${input.language}.`);
    }
    throw error;
  }
}

export function templateView(template: ChannelTemplate): TemplateView {
  return {
    id: template.id,
    name: template.name,
    language: template.language,
    category: template.category,
    status: template.status,
    body: template.body,
    parameterCount: template.parameterCount,
  };
}

/** GET /templates: the acting channel's templates, newest first. */
export async function listTemplates(
  ctx: RequestContext,
  params: { limit: number; cursor?: Cursor | undefined },
  query: PrismaQuery = {},
): Promise<Page<ChannelTemplate>> {
  const channel = actingChannel(ctx.auth);
  const rows = await ctx.prisma.channelTemplate.findMany({
    ...query,
    where: { AND: [{ workspaceId: ctx.auth.workspace.id, channelId: channel.id }, afterCursor(params.cursor)] },
    orderBy: NEWEST_FIRST,
    take: params.limit + 1,
  });
  return toPage(rows, params.limit);
}
