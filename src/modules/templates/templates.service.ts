import type { ChannelTemplate, PrismaClient, TemplateStatus } from '../../generated/prisma/client.js';
import { InputError } from '../../errors/domain.js';
import { isUniqueViolation } from '../../db/errors.js';
import { countParameters } from './templates.schemas.js';
import { templateTable } from './templates.sql.js';
import type { RequestContext } from '../../context/types.js';
import { pageArgs, type RowLoad } from '../../db/view.js';
import { actingChannel } from '../../context/request.js';
import { keysetOrder, keysetWhere, toPage, type Page, type PageRequest } from '../../lib/pagination.js';

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

/** What GET /templates reads of each template: its view's columns. */
const TEMPLATE_VIEW: RowLoad<ChannelTemplate> = { columns: templateTable.columns };

/** GET /templates: the acting channel's templates, newest first, each with what `load` says. */
export async function listTemplates(
  ctx: RequestContext,
  params: PageRequest,
  load: RowLoad<ChannelTemplate> = TEMPLATE_VIEW,
): Promise<Page<ChannelTemplate>> {
  const channel = actingChannel(ctx.auth);
  const rows = await ctx.prisma.channelTemplate.findMany({
    ...pageArgs(load),
    where: { AND: [{ workspaceId: ctx.auth.workspace.id, channelId: channel.id }, keysetWhere(params)] },
    orderBy: keysetOrder(params),
    take: params.limit + 1,
  });
  return toPage(rows as ChannelTemplate[], params);
}
