import { describe, expect, it } from 'vitest';
import type { Contact } from '../../src/generated/prisma/client.js';
import { viewFields, viewTable } from '../../src/db/view.js';
import { channelViewSchema } from '../../src/modules/channels/channels.schemas.js';
import { channelTable } from '../../src/modules/channels/channels.sql.js';
import { contactViewSchema, type ContactView } from '../../src/modules/contacts/contacts.schemas.js';
import { contactTable } from '../../src/modules/contacts/contacts.sql.js';
import { conversationViewSchema } from '../../src/modules/conversations/conversations.schemas.js';
import { conversationTable } from '../../src/modules/conversations/conversations.sql.js';
import { messageViewSchema } from '../../src/modules/messages/messages.schemas.js';
import { messageTable } from '../../src/modules/messages/messages.sql.js';
import { templateViewSchema } from '../../src/modules/templates/templates.schemas.js';
import { templateTable } from '../../src/modules/templates/templates.sql.js';

/*
 * Each domain's view table against its zod view schema, the OpenAPI source of REST answers. The
 * types link them (a key missing on either side, or a value of another type, does not compile:
 * see `typeLevelChecks`, held by `npm run check`); this test holds the order too, which is the
 * order of the keys in every answer and event.
 */
const tables = [
  ['contact', contactTable, contactViewSchema],
  ['message', messageTable, messageViewSchema],
  ['conversation', conversationTable, conversationViewSchema],
  ['template', templateTable, templateViewSchema],
  ['channel', channelTable, channelViewSchema],
] as const;

describe('a domain’s view table', () => {
  it.each(tables)('has the keys of the %s view schema, in its order', (_name, table, schema) => {
    expect(Object.keys(table.fields)).toEqual(Object.keys(schema.shape));
  });

  it('reads the columns its fields read, each once', () => {
    expect(contactTable.columns.names).toEqual(['id', 'name', 'email', 'phone', 'isGroup', 'createdAt', 'updatedAt']);
    expect(messageTable.columns.names).toContain('senderName');
    expect(messageTable.columns.names).not.toContain('channel');
    expect(new Set(messageTable.columns.names).size).toBe(messageTable.columns.names.length);
  });
});

/** Tables that must not compile; never run. */
export function typeLevelChecks() {
  const field = viewFields<Contact>();
  const { isGroup: _left, ...withoutIsGroup } = contactTable.fields;
  // @ts-expect-error a key of the zod view is missing
  viewTable<Contact, ContactView>(withoutIsGroup);
  viewTable<Contact, ContactView>({
    ...contactTable.fields,
    // @ts-expect-error a key the zod view does not have
    status: field.column('status'),
  });
  viewTable<Contact, ContactView>({
    ...contactTable.fields,
    // @ts-expect-error a value of another type than the zod view's
    isGroup: field.column('name'),
  });
  // @ts-expect-error a value reading a column its field does not name
  field.derived(['name'], (contact) => contact.email);
}
