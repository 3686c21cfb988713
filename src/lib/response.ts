import { Response } from '@whatwg-node/fetch';

/**
 * The Response the server answers with: the fetch adapter's own, the one yoga answers GraphQL
 * with, whose body the adapter writes to the socket as it is. Node's built-in Response keeps its
 * body as a web stream that the adapter then has to read back, which cost about a tenth of a
 * REST page's CPU.
 */
export const FetchResponse: typeof globalThis.Response = Response;
