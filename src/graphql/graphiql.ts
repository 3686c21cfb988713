import type { GraphiQLOptions } from 'graphql-yoga';

/** The operation GraphiQL opens with: it runs as is against the demo workspace. */
export const EXAMPLE_OPERATION = `# Connect gateway. In the Headers tab below, paste a
# channel API key after "Bearer ", then press Run.
query Example {
  viewer {
    workspace { id name }
    channel { id name type status }
  }
  templates(first: 5) {
    edges { node { name language body parameterCount } }
  }
  conversations(first: 5) {
    edges {
      node {
        id status lastMessageAt
        contact { name email phoneNumber }
        messages(first: 3) {
          edges { node { body placeholder createdAt sender { type name } } }
        }
      }
    }
  }
}

# mutation Send {
#   sendMessage(input: {
#     to: { phone: "+31612345678", name: "Jan" }
#     message: "Hello from GraphiQL"
#   }) {
#     message { id status conversation { id } }
#     userErrors { field message code }
#   }
# }
`;

/**
 * What GraphiQL opens with. The page is served to anyone who can reach it, so it carries no
 * key: the Authorization header waits for one. Headers are not persisted in the browser's
 * storage, so a pasted key lives only as long as the tab.
 *
 * GraphiQL reads `defaultQuery` only while the browser's storage holds no tabs: on a later visit
 * it would open an empty tab. `query` (yoga's name for GraphiQL's initial query) opens the example
 * on every visit, in the unedited example tab when there is one, and beside the visitor's own tabs.
 * The address carries no query (docs/graphql.md#graphiql).
 */
export const GRAPHIQL_OPTIONS: GraphiQLOptions & { query: string } = {
  title: 'Connect gateway',
  query: EXAMPLE_OPERATION,
  defaultQuery: EXAMPLE_OPERATION,
  defaultHeaders: JSON.stringify({ Authorization: 'Bearer ' }, null, 2),
  shouldPersistHeaders: false,
};

/**
 * Renders GraphiQL from `@graphql-yoga/render-graphiql`, which inlines React, GraphiQL, its
 * styles and editor workers into the page: it works offline and loads nothing from a CDN.
 * The bundle is some megabytes, so it is imported on the first page view (never in
 * production, where GraphiQL is off) and each rendered page is kept.
 */
export function graphiqlRenderer(): (options: GraphiQLOptions) => Promise<string> {
  const pages = new Map<string, Promise<string>>();
  return (options) => {
    const key = JSON.stringify(options);
    let page = pages.get(key);
    if (!page) {
      page = import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) => renderGraphiQL(options));
      pages.set(key, page);
      // A failed render is not kept: the next page view tries again.
      page.catch(() => pages.delete(key));
    }
    return page;
  };
}
