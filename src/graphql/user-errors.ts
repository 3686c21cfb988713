import { builder } from './builder.js';

export const UserErrorCode = builder.enumType('UserErrorCode', {
  values: {
    INVALID: { description: 'The value breaks a field rule.' },
    TAKEN: { description: 'Another contact already holds the value.' },
    NOT_FOUND: { description: 'The object does not exist or is not visible to the caller.' },
  } as const,
});

export interface UserErrorShape {
  field: string[];
  message: string;
  code: 'INVALID' | 'TAKEN' | 'NOT_FOUND';
}

export const UserError = builder.objectRef<UserErrorShape>('UserError').implement({
  description: 'An expected failure of a mutation; the message is the REST 422 message for the same input.',
  fields: (t) => ({
    field: t.exposeStringList('field', { description: 'The input path, e.g. ["input", "email"].' }),
    message: t.exposeString('message'),
    code: t.field({ type: UserErrorCode, resolve: (e) => e.code }),
  }),
});

/** The payload every mutation returns: its object (by id) and the user errors. */
export interface Payload {
  id: string | null;
  userErrors: UserErrorShape[];
}
