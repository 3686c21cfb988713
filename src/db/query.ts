/**
 * The shape a caller may add to a Prisma read: the include or select that a view
 * needs. REST passes the include of its view; GraphQL passes the selection Pothos
 * planned from the query, so nested fields load in the same round trip.
 */
export type PrismaQuery = { include?: object; select?: object };
