import type { ChannelTemplate, PrismaClient, TemplateStatus } from '../../generated/prisma/client.js';
import { InputError } from '../../errors/domain.js';
import { isUniqueViolation } from '../../db/errors.js';
import { countParameters } from './templates.schemas.js';

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
