import { graphql } from 'relay-runtime';

// The thread's documents, as the Relay compiler reads them (`npm run relay`): each is compiled into
// ./__generated__/<name>.graphql.ts, which ./client.ts imports, and its text into
// ./persisted-documents.json, the manifest the deploy step registers. Babel's Relay plugin would
// turn each tag into an import of its artifact; without it this file is never run (a `graphql`
// tag throws when it is), only compiled.

/** A conversation and the newest `count` of its messages, oldest first. */
graphql`
  query ThreadQuery($id: ID!, $count: Int!, $before: String) {
    conversation(id: $id) {
      id
      status
      contact {
        name
      }
      ...Thread_messages @arguments(count: $count, before: $before)
    }
  }
`;

/**
 * The conversation's messages in reading order, paged backward (`last`, `before`): Relay's
 * connection keeps the pages it loaded in one list, and `@refetchable` makes the query that loads
 * an older page through `node(id:)`.
 */
graphql`
  fragment Thread_messages on Conversation
  @refetchable(queryName: "ThreadMessagesPaginationQuery")
  @argumentDefinitions(count: { type: "Int!" }, before: { type: "String" }) {
    messages(order: asc, last: $count, before: $before) @connection(key: "Thread_messages") {
      edges {
        node {
          id
          body
          direction
          createdAt
        }
      }
      pageInfo {
        hasPreviousPage
        startCursor
      }
    }
  }
`;
