import type { Logger } from 'pino';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { AppDeps } from '../../context/deps.js';
import { restErrorResponse } from '../../rest/errors.js';
import { routeNotFound } from '../../http/exchange.js';
import type { HttpRoute } from '../../http/routes.js';
import { API_PREFIX, OPENAPI_PATH } from '../../rest/route.js';
import { FetchResponse } from '../../lib/response.js';

/** Where the page lives; its assets are the fixed names below it. */
export const DOCS_PATH = '/docs';

const TEXT_CSS = 'text/css; charset=utf-8';
const TEXT_JS = 'text/javascript; charset=utf-8';

/** The only files of swagger-ui-dist the page loads, by the name they are served under. */
const PACKAGE_ASSETS: Record<string, string> = {
  'swagger-ui.css': TEXT_CSS,
  'swagger-ui-bundle.js': TEXT_JS,
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/**
 * Swagger UI's own settings. The document is fetched from this server by path, so the page works
 * on any host and behind the compose file's proxy. Nothing is sent anywhere else: no online
 * validator, and no `?url=`/`?configUrl=` from the address bar (queryConfigEnabled stays off) nor
 * the standalone layout's top bar with its box for another document's URL, so neither a link nor a
 * visitor can point the page at another document. An authorization entered in the page lives
 * only as long as the tab (persistAuthorization: false). "Try it out" is one click away on each
 * operation rather than on by default: the page is first a reference, and a request sent from it
 * is real.
 */
const INIT_SCRIPT = `"use strict";
SwaggerUIBundle({
  url: ${JSON.stringify(`${API_PREFIX}${OPENAPI_PATH}`)},
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: "none",
  queryConfigEnabled: false,
  persistAuthorization: false,
  tryItOutEnabled: false,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
`;

/** Every name served below /docs: the package's files and the page's own two. */
const SERVED = new Set([...Object.keys(PACKAGE_ASSETS), 'docs.js', 'docs.css']);

const PAGE_CSS = `html { box-sizing: border-box; overflow-y: scroll; }
*, *::before, *::after { box-sizing: inherit; }
body { margin: 0; background: #fafafa; }
`;

/**
 * The page loads only this server's own files: scripts and styles from here, images from here or
 * inline (Swagger UI's icons are data: URIs), requests to here, and it cannot be framed.
 */
const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  body: Buffer;
  type: string;
  /** A digest of the body: a URL carrying it names these exact bytes, which may then be kept for good. */
  version: string;
}

interface Docs {
  page: Buffer;
  assets: Map<string, Asset>;
}

const digest = (body: Buffer) => createHash('sha256').update(body).digest('hex').slice(0, 16);
const asset = (body: Buffer, type: string): Asset => ({ body, type, version: digest(body) });

/** Resolved from the package itself, not from this file's place, so the compiled server finds it too. */
function packageDir(): string {
  return path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

function load(): Docs {
  const dir = packageDir();
  const assets = new Map<string, Asset>();
  for (const [name, type] of Object.entries(PACKAGE_ASSETS)) assets.set(name, asset(readFileSync(path.join(dir, name)), type));
  assets.set('docs.js', asset(Buffer.from(INIT_SCRIPT), TEXT_JS));
  assets.set('docs.css', asset(Buffer.from(PAGE_CSS), TEXT_CSS));
  const href = (name: string) => `${DOCS_PATH}/${name}?v=${assets.get(name)!.version}`;
  // Paths from the root, so that the page finds them from /docs and from /docs/ alike.
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Connect API reference</title>
<link rel="stylesheet" href="${href('swagger-ui.css')}">
<link rel="stylesheet" href="${href('docs.css')}">
<link rel="icon" type="image/png" sizes="32x32" href="${href('favicon-32x32.png')}">
<link rel="icon" type="image/png" sizes="16x16" href="${href('favicon-16x16.png')}">
</head>
<body>
<noscript>This page needs JavaScript. The OpenAPI document it renders is <a href="${API_PREFIX}${OPENAPI_PATH}">${API_PREFIX}${OPENAPI_PATH}</a>.</noscript>
<div id="swagger-ui"></div>
<script src="${href('swagger-ui-bundle.js')}"></script>
<script src="${href('docs.js')}"></script>
</body>
</html>
`;
  return { page: Buffer.from(page), assets };
}

/** Read on the first request and kept: a process that never serves the page never reads the bundle. */
let docs: Docs | undefined;

function respond(status: number, body: Buffer, headers: Record<string, string>): Response {
  const all = { ...headers, 'content-length': String(body.byteLength), 'x-content-type-options': 'nosniff' };
  return new FetchResponse(new Uint8Array(body), { status, headers: all });
}

/**
 * The API reference page (Swagger UI over the REST API's OpenAPI document) and the few files it
 * loads, served from the installed swagger-ui-dist package: nothing comes from a CDN. No
 * credential is needed and none is ever part of the page. Only the names listed here are served;
 * any other name below /docs is the route table's 404.
 */
export function docsRoutes(deps: AppDeps): HttpRoute[] {
  const refuse = (error: unknown, log: Logger) => restErrorResponse(error, log);
  const loaded = (): Docs => (docs ??= load());
  return [
    {
      method: 'GET',
      path: DOCS_PATH,
      label: `GET ${DOCS_PATH}`,
      auth: 'none',
      refuse,
      handle: async () =>
        respond(200, loaded().page, {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-cache',
          'content-security-policy': PAGE_POLICY,
          'referrer-policy': 'no-referrer',
        }),
    },
    {
      method: 'GET',
      path: `${DOCS_PATH}/:asset`,
      label: `GET ${DOCS_PATH}/{asset}`,
      auth: 'none',
      refuse,
      async handle({ url, params }) {
        const name = params.asset ?? '';
        // Exactly the names listed: the table's rule that ignores a trailing slash does not make `name/` a file.
        if (!SERVED.has(name) || url.pathname.endsWith('/')) return routeNotFound();
        const found = loaded().assets.get(name)!;
        // Only the URL the page itself uses is immutable; any other may outlive the bytes it names.
        const cache = url.searchParams.get('v') === found.version ? 'public, max-age=31536000, immutable' : 'no-cache';
        return respond(200, found.body, { 'content-type': found.type, 'cache-control': cache });
      },
    },
  ];
}
