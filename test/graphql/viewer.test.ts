import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addChannel, bearer, createConnection, workspaceWithChannel } from '../helpers/factories.js';
import { messagingSetup } from '../helpers/messaging.js';
import { mintSession } from '../helpers/sessions.js';
import { executeOperation } from '../helpers/graphql.js';
import { graphql } from '../gql/index.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const ViewerQuery = graphql(`
  query Viewer {
    viewer {
      workspace { id name }
      channel { id name type status }
    }
    channels { id }
  }
`);

describe('viewer', () => {
  it('returns the workspace and the acting channel of the credential', async () => {
    const { host, apiKey, workspace, channel } = await workspaceWithChannel(app.db.prisma);
    const result = await executeOperation(app, host, bearer(apiKey), ViewerQuery);
    expect(result.status).toBe(200);
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      viewer: {
        workspace: { id: workspace.id, name: 'Test workspace' },
        channel: { id: channel.id, name: 'Main channel', type: 'whatsapp', status: 'active' },
      },
      channels: [{ id: channel.id }],
    });
  });
});

const WhoQuery = graphql(`
  query ViewerWho {
    viewer {
      user { id name email }
      scopes
      expiresAt
      channels { id name }
    }
  }
`);

describe('viewer: who the credential is', () => {
  it('has no user for a backend credential, every scope, no expiry and its channels', async () => {
    const s = await messagingSetup(app);
    const second = await addChannel(app.db.prisma, s.workspace.id, 'Second');
    const connection = await createConnection(app.db.prisma, { workspaceId: s.workspace.id, name: 'Backend', channelIds: [s.channel.id, second.channel.id] });
    const key = await executeOperation(app, s.host, bearer(s.apiKey), WhoQuery);
    expect(key.errors).toBeUndefined();
    expect(key.data).toEqual({
      viewer: { user: null, scopes: ['read', 'send', 'contacts', 'conversations', 'broadcasts', 'credentials'], expiresAt: null, channels: [{ id: s.channel.id, name: 'Main channel' }] },
    });
    // Several channels and none named: the viewer is answered all the same.
    const token = await executeOperation(app, s.host, bearer(connection.token), WhoQuery);
    expect(token.errors).toBeUndefined();
    expect(token.data?.viewer?.channels).toEqual([
      { id: s.channel.id, name: 'Main channel' },
      { id: second.channel.id, name: 'Second' },
    ]);
  });

  it("is a session's user, scopes, expiry and channels", async () => {
    const s = await messagingSetup(app);
    const session = await mintSession(s.api, { user: s.user.email, scopes: ['read', 'send'], ttl_seconds: 600 });
    const result = await executeOperation(app, s.host, bearer(session.token), WhoQuery);
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      viewer: {
        user: { id: s.user.id, name: 'Agent Smith', email: session.user.email },
        scopes: ['read', 'send'],
        expiresAt: session.expiresAt,
        channels: [{ id: s.channel.id, name: 'Main channel' }],
      },
    });
  });
});
