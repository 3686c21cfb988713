import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import type { RunSql } from './database.js';

/** Either the client or an interactive transaction: services accept both. */
export type Db = PrismaClient | Prisma.TransactionClient;

/** Statements run on `db` (inside its transaction, if it is one), as `Database.query` runs them alone. */
export const sqlOn =
  (db: Db): RunSql =>
  <T>(statement: Prisma.Sql) =>
    db.$queryRaw<T[]>(statement);
