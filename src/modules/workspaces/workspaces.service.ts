import type { PrismaClient, Workspace } from '../../generated/prisma/client.js';
import { InputError } from '../../errors/domain.js';
import { isUniqueViolation } from '../../db/errors.js';

export async function createWorkspace(prisma: PrismaClient, input: { hostname: string; name: string }): Promise<Workspace> {
  try {
    return await prisma.workspace.create({ data: input });
  } catch (error) {
    if (isUniqueViolation(error)) throw new InputError(`A workspace with hostname ${input.hostname} already exists.`);
    throw error;
  }
}

export async function workspaceByHostname(prisma: PrismaClient, hostname: string): Promise<Workspace> {
  const workspace = await prisma.workspace.findUnique({ where: { hostname } });
  if (!workspace) throw new InputError(`No workspace has hostname ${hostname}.`);
  return workspace;
}
