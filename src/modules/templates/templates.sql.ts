import type { ChannelTemplate } from '../../generated/prisma/client.js';
import { viewFields, viewTable } from '../../db/view.js';
import type { TemplateView } from './templates.schemas.js';

const field = viewFields<ChannelTemplate>();

/** The API view of a channel template. */
export const templateTable = viewTable<ChannelTemplate, TemplateView>({
  id: field.column('id'),
  name: field.column('name'),
  language: field.column('language'),
  category: field.column('category'),
  status: field.column('status'),
  body: field.column('body'),
  parameterCount: field.column('parameterCount'),
});
