import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { DOCUMENTED_ROUTES } from '../../src/app.js';
import { RouteTable } from '../../src/http/routes.js';
import { openApiDocument } from '../../src/rest/openapi.js';
import { API_PREFIX, OPENAPI_PATH } from '../../src/rest/route.js';

/*
 * Holds every REST answer the suite receives to the OpenAPI document: the status
 * must be one the operation documents, the documented headers must be there, and
 * the body must validate (Ajv, JSON Schema 2020-12) against the documented schema.
 * The document is the one the server serves, so it cannot drift from the code.
 */

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

interface ResponseObject {
  $ref?: string;
  headers?: Record<string, { required?: boolean }>;
  content?: Record<string, { schema: unknown }>;
}

interface Operation {
  operationId: string;
  responses: Record<string, ResponseObject>;
}

export const document = openApiDocument(DOCUMENTED_ROUTES) as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, ResponseObject> };
};

const DOCUMENT_ID = 'https://connect-gateway.test/openapi.json';
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
addFormats(ajv);
ajv.addSchema({ ...document, $id: DOCUMENT_ID });

const pointer = (...segments: string[]) => segments.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

const validators = new Map<string, ValidateFunction>();
function validatorAt(path: string): ValidateFunction {
  let validate = validators.get(path);
  if (!validate) {
    validate = ajv.getSchema(`${DOCUMENT_ID}#/${path}`);
    if (!validate) throw new Error(`No schema at #/${path} in the OpenAPI document`);
    validators.set(path, validate);
  }
  return validate;
}

/**
 * The server's own route table over the documented routes, each labelled with its path in the
 * document: it decides which declared route, if any, a path reaches.
 */
const router = new RouteTable().add(
  ...[
    ...DOCUMENTED_ROUTES.rest.map((route) => ({ method: route.method, path: `${API_PREFIX}${route.path}` })),
    ...DOCUMENTED_ROUTES.webhooks.map((route) => ({ method: route.method, path: route.path })),
  ].map(({ method, path }) => ({
    method,
    path,
    label: path.replace(/:(\w+)/g, '{$1}'),
    auth: 'none' as const,
    refuse: () => new Response(null, { status: 500 }),
    handle: async () => undefined,
  })),
);

/** Whether the document describes answers on this path: the REST API's and the provider webhooks'. */
const isDocumentedPath = (pathname: string) => pathname === API_PREFIX || pathname.startsWith(`${API_PREFIX}/`) || pathname.startsWith('/webhooks/');

/**
 * The documented response for a request and status, as a JSON pointer into the
 * document: the operation's own, or for an unknown path or method the component
 * the API answers them with.
 */
function documentedResponse(method: string, pathname: string, status: string): { at: string; response: ResponseObject } | string {
  const verb = (method === 'HEAD' ? 'GET' : method).toLowerCase();
  const found = router.find(method, pathname);
  if (!found) {
    return status === '404' ? { at: pointer('components', 'responses', 'NotFound'), response: document.components.responses.NotFound! } : `an unknown path answered ${status}, not 404`;
  }
  if ('allow' in found) {
    return status === '405'
      ? { at: pointer('components', 'responses', 'MethodNotAllowed'), response: document.components.responses.MethodNotAllowed! }
      : `${method} on a path without it answered ${status}, not 405`;
  }
  const template = found.route.label;
  const operation = document.paths[template]?.[verb];
  if (!operation) return `${method} ${template} is served but not in the document`;
  const response = operation.responses[status];
  if (!response) return `${operation.operationId} answered ${status}, which the document does not list (it lists ${Object.keys(operation.responses).join(', ')})`;
  if (response.$ref) {
    const name = response.$ref.split('/').pop()!;
    return { at: pointer('components', 'responses', name), response: document.components.responses[name]! };
  }
  return { at: pointer('paths', template, verb, 'responses', status), response };
}

/** Throws when a REST answer does not match the OpenAPI document. */
export async function checkAgainstDocument(requestMethod: string, url: URL, response: Response, requestHeaders = new Headers()): Promise<void> {
  const method = requestMethod.toUpperCase();
  if (!isDocumentedPath(url.pathname)) return;
  // CORS preflights are answered in front of the API, by the CORS settings.
  if (method === 'OPTIONS' && requestHeaders.has('access-control-request-method')) return;
  // The path as the server routes it: undecoded, the router decoding its parameters.
  const pathname = url.pathname;
  const request = `${method} ${pathname}`;
  if (pathname.replace(/\/$/, '') === `${API_PREFIX}${OPENAPI_PATH}`) {
    if (method === 'GET' || method === 'HEAD' || response.status === 405) return;
    throw new Error(`OpenAPI drift: ${request} answered ${response.status}, not 405`);
  }
  const found = documentedResponse(method, pathname, String(response.status));
  if (typeof found === 'string') throw new Error(`OpenAPI drift: ${request}: ${found}`);
  const { at, response: documented } = found;
  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    if (header.required && !response.headers.has(name)) throw new Error(`OpenAPI drift: ${request} ${response.status} lacks the documented header ${name}`);
  }
  if (method === 'HEAD') return;
  const text = await response.clone().text();
  const schema = documented.content?.['application/json'];
  // A file: any bytes, of the type the answer declares.
  if (!schema && documented.content?.['application/octet-stream']) return;
  if (!schema) {
    // Text of a documented type (a webhook's `OK`, its TwiML).
    const type = response.headers.get('content-type') ?? '';
    if (text && !Object.keys(documented.content ?? {}).some((documentedType) => type.startsWith(documentedType))) {
      throw new Error(`OpenAPI drift: ${request} ${response.status} has a body the document does not describe`);
    }
    return;
  }
  if (!(response.headers.get('content-type') ?? '').startsWith('application/json')) {
    throw new Error(`OpenAPI drift: ${request} ${response.status} is ${response.headers.get('content-type')}, not application/json`);
  }
  const validate = validatorAt(`${at}/${pointer('content', 'application/json', 'schema')}`);
  if (!validate(JSON.parse(text))) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}`).join('; ');
    throw new Error(`OpenAPI drift: ${request} ${response.status} body does not match the document: ${problems}\n${text.slice(0, 500)}`);
  }
}
