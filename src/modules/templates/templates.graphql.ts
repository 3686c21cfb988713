import type { ChannelTemplate } from '../../generated/prisma/client.js';
import { builder } from '../../graphql/builder.js';
import { NodeInterface } from '../../graphql/node.js';
import { pageLoader } from '../../graphql/rows.js';
import { connectionType, connectionComplexity, pageArgs, pageFromArgs } from '../../graphql/connection.js';
import { TemplateStatus } from '../../generated/prisma/enums.js';
import { listTemplates } from './templates.service.js';

const TemplateStatusEnum = builder.enumType(TemplateStatus, { name: 'TemplateStatus' });

export const TemplateObject = builder.prismaObject('ChannelTemplate', {
  name: 'Template',
  interfaces: [NodeInterface],
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    language: t.exposeString('language'),
    category: t.exposeString('category'),
    status: t.expose('status', { type: TemplateStatusEnum }),
    body: t.exposeString('body', { description: 'Text with {{1}}, {{2}}… placeholders.' }),
    parameterCount: t.exposeInt('parameterCount'),
  }),
});

const TemplateConnection = connectionType('Template', TemplateObject);

/** How a page of `templates` loads its rows. */
const templatesPage = pageLoader<ChannelTemplate>();

builder.queryField('templates', (t) =>
  t.field({
    type: TemplateConnection,
    nullable: true,
    description: "The acting channel's templates, newest first.",
    scope: 'read',
    args: pageArgs,
    complexity: connectionComplexity,
    resolve: (_root, args, ctx, info) => listTemplates(ctx, pageFromArgs(args), templatesPage(ctx, info)),
  }),
);
