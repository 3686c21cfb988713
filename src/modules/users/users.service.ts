import type { PrismaClient, User } from '../../generated/prisma/client.js';
import { keysetOrder, keysetWhere, toPage, type Page, type PageRequest } from '../../lib/pagination.js';
import { InputError } from '../../errors/domain.js';
import { isUniqueViolation } from '../../db/errors.js';

export async function createUser(
  prisma: PrismaClient,
  input: { workspaceId: string; name: string; email: string },
): Promise<User> {
  try {
    return await prisma.user.create({ data: { ...input, emailNormalized: input.email.toLowerCase() } });
  } catch (error) {
    if (isUniqueViolation(error)) throw new InputError(`A user with email ${input.email} already exists in this workspace.`);
    throw error;
  }
}

/** The workspace's users for assignment pickers (docs/inbox.md), newest first. */
export async function listUsers(
  ctx: { prisma: PrismaClient; auth: { workspace: { id: string } } },
  params: PageRequest,
): Promise<Page<Pick<User, 'id' | 'name' | 'email' | 'createdAt'>>> {
  const rows = await ctx.prisma.user.findMany({
    where: { AND: [{ workspaceId: ctx.auth.workspace.id }, keysetWhere(params)] },
    select: { id: true, name: true, email: true, createdAt: true },
    orderBy: keysetOrder(params),
    take: params.limit + 1,
  });
  return toPage(rows, params);
}
