import { Prisma } from '../../generated/prisma/client.js';

/**
 * Opt-outs (docs/contacts.md, "Opt-outs"): a contact who asked a channel to stop bulk messages,
 * by a keyword sent to it or through the provider refusing a send. An opt-out is one row per
 * contact and channel; the first one is kept (a repeated STOP or refusal changes nothing), and
 * opting back in deletes it. One-to-one sends do not look at opt-outs; broadcasts skip them.
 */

export type OptOutSource = 'keyword' | 'provider';

/** The statement opting the contact out of the channel, unless it already is. */
export function optOutSql(contactId: string, channelId: string, at: Date, source: OptOutSource): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO contact_opt_outs (contact_id, channel_id, at, source)
    VALUES (${contactId}::uuid, ${channelId}::uuid, ${at}::timestamptz, ${source})
    ON CONFLICT (contact_id, channel_id) DO NOTHING`;
}

/** The statement opting the contact back in to the channel. */
export function optInSql(contactId: string, channelId: string): Prisma.Sql {
  return Prisma.sql`DELETE FROM contact_opt_outs WHERE contact_id = ${contactId}::uuid AND channel_id = ${channelId}::uuid`;
}

/** The statement opting out the recipient of an outbound message from its channel: the provider refused it as opted out. */
export function messageOptOutSql(messageId: string, at: Date): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO contact_opt_outs (contact_id, channel_id, at, source)
    SELECT contact_id, channel_id, ${at}::timestamptz, 'provider' FROM messages WHERE id = ${messageId}::uuid
    ON CONFLICT (contact_id, channel_id) DO NOTHING`;
}
