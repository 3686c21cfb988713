import { builder } from '../../graphql/builder.js';

export const WorkspaceType = builder.prismaObject('Workspace', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
  }),
});
