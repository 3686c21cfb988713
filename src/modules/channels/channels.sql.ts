import type { Channel } from '../../generated/prisma/client.js';
import { viewFields, viewTable } from '../../db/view.js';
import type { ChannelView } from './channels.schemas.js';

const field = viewFields<Channel>();

/** The API view of a channel: never its provider settings, credentials or webhook secret. */
export const channelTable = viewTable<Channel, ChannelView>({
  id: field.column('id'),
  name: field.column('name'),
  type: field.column('type'),
  status: field.column('status'),
});
