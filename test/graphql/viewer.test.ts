import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer, workspaceWithChannel } from '../helpers/factories.js';
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
