import type { Prisma, PrismaClient } from '../generated/prisma/client.js';

/** Either the client or an interactive transaction: services accept both. */
export type Db = PrismaClient | Prisma.TransactionClient;
