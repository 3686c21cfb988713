/** The operation GraphiQL opens with: it runs as is against the demo workspace. */
export const EXAMPLE_OPERATION = `# Connect gateway. Queries act as the channel of the API key in the Headers tab.
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
        messages(first: 3) { edges { node { body placeholder sender { type name } createdAt } } }
      }
    }
  }
}

# mutation Send {
#   sendMessage(input: { to: { phone: "+31612345678", name: "Jan" }, message: "Hello from GraphiQL" }) {
#     message { id status conversation { id } }
#     userErrors { field message code }
#   }
# }
`;

/** GraphiQL options: the example operation, and the demo key when this process created it. */
export function graphiqlOptions(apiKey?: string) {
  return {
    title: 'Connect gateway',
    defaultQuery: EXAMPLE_OPERATION,
    headers: JSON.stringify({ Authorization: `Bearer ${apiKey ?? '<channel API key>'}` }, null, 2),
  };
}
