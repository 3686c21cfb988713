import { GraphQLError, Kind } from 'graphql';
import { builder } from './builder.js';
import { isoTimestamp } from '../lib/time.js';

function parseDate(value: unknown): Date {
  const date = typeof value === 'string' ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO-8601 string.');
  return date;
}

builder.scalarType('DateTime', {
  description: 'An ISO-8601 UTC timestamp.',
  serialize: (value) => isoTimestamp(value),
  parseValue: parseDate,
  parseLiteral: (ast) => parseDate(ast.kind === Kind.STRING ? ast.value : null),
});
