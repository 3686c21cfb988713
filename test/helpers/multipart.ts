/*
 * Incremental delivery over `multipart/mixed` (docs/graphql.md#incremental-delivery-defer-and-stream),
 * read as Apollo Client and urql read it: parts separated by `--<boundary>` lines, each with its
 * own headers and a JSON body, the last delimiter closed with `--`.
 */

export interface IncrementalPart {
  data?: Record<string, any> | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  incremental?: { data?: Record<string, any> | null; items?: unknown[]; path: (string | number)[]; label?: string; errors?: IncrementalPart['errors'] }[];
  hasNext?: boolean;
}

/** The JSON parts of a `multipart/mixed` answer, in order; throws when the answer is not one. */
export async function multipartParts(response: Response): Promise<IncrementalPart[]> {
  const type = response.headers.get('content-type') ?? '';
  const boundary = /^multipart\/mixed\s*;.*boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!boundary) throw new Error(`not a multipart/mixed answer: ${response.status} ${type} ${await response.text()}`);
  const text = await response.text();
  const delimiter = `\r\n--${boundary}`;
  const end = text.indexOf(`${delimiter}--`);
  if (end < 0) throw new Error(`multipart answer without its closing delimiter: ${JSON.stringify(text)}`);
  return text
    .slice(0, end)
    .split(delimiter)
    .slice(1)
    .map((part) => {
      const body = part.slice(part.indexOf('\r\n\r\n') + 4);
      return JSON.parse(body) as IncrementalPart;
    });
}
