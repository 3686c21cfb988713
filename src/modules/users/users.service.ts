import type { PrismaClient, User } from '../../generated/prisma/client.js';
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
