import { builder } from '../../graphql/builder.js';
import { NodeInterface } from '../../graphql/node.js';

/** A workspace user: who a session acts as, and who may be named in a message's `from`. */
export const UserObject = builder.objectRef<{ id: string; name: string; email: string }>('User').implement({
  description: 'A workspace user.',
  interfaces: [NodeInterface],
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    email: t.exposeString('email'),
  }),
});
