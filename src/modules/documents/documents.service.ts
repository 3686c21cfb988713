import { createHash } from 'node:crypto';
import { Prisma, type PrismaClient, type Workspace } from '../../generated/prisma/client.js';
import type { RunSql } from '../../db/database.js';
import { ValidationError } from '../../errors/domain.js';
import { parseInput } from '../../lib/validation.js';
import { printedHash, type DocumentStore } from '../../graphql/trusted-documents.js';
import { DOCUMENT_HASH, manifestSchema } from './documents.schemas.js';

/** A document's id: the lowercase hex SHA-256 of its text as UTF-8. */
export function documentHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** What is wrong with a document's text against the schema, or null: supplied by the GraphQL layer. */
export type DocumentProblem = (text: string) => string | null;

export interface ManifestDocument {
  hash: string;
  /** The SHA-256 of the text as print() prints it (the same as `hash` for a text print() wrote). */
  printedHash: string;
  body: string;
}

/**
 * The documents of a manifest, each checked: its key the SHA-256 of its text, its text a document
 * valid against the schema within the document limits. Any fault is a 422 naming every faulty key.
 */
export function manifestDocuments(manifest: unknown, problemOf: DocumentProblem): ManifestDocument[] {
  const entries = Object.entries(parseInput(manifestSchema, manifest));
  if (!entries.length) throw ValidationError.field('body', 'The manifest holds no document: send persisted-documents.json as written by graphql-codegen.');
  const errors: Record<string, string[]> = {};
  const documents = new Map<string, string>();
  for (const [key, body] of entries) {
    // The client preset writes keys as document ids (`sha256:<hex>`); a bare hex hash is taken too.
    const hash = key.replace(/^sha256:/, '').toLowerCase();
    if (!DOCUMENT_HASH.test(hash)) {
      errors[key] = ["The key must be the document's id: sha256: followed by the 64 hexadecimal characters of its SHA-256."];
    } else if (documentHash(body) !== hash) {
      errors[key] = ['The key is not the SHA-256 of its document.'];
    } else {
      const problem = problemOf(body);
      if (problem) errors[key] = [`The document is not valid against the schema: ${problem}`];
      else documents.set(hash, body);
    }
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  // A document valid against the schema parses: its printed hash is never null.
  return [...documents].map(([hash, body]) => ({ hash, printedHash: printedHash(body)!, body }));
}

/**
 * Registers a manifest's documents for the workspace, all or none: how many were new to it. A
 * document already registered stays as it is (its text is the one its hash names).
 */
export async function registerDocuments(prisma: PrismaClient, workspaceId: string, manifest: unknown, problemOf: DocumentProblem): Promise<number> {
  const documents = manifestDocuments(manifest, problemOf);
  const { count } = await prisma.graphqlDocument.createMany({
    data: documents.map((document) => ({ workspaceId, hash: document.hash, printedHash: document.printedHash, body: document.body })),
    skipDuplicates: true,
  });
  return count;
}

/** Turns the workspace's restriction of session tokens to registered documents on or off. */
export function setTrustedDocumentsOnly(prisma: PrismaClient, workspaceId: string, on: boolean): Promise<Workspace> {
  return prisma.workspace.update({ where: { id: workspaceId }, data: { trustedDocumentsOnly: on } });
}

/** Stores the printed hashes of documents stored before they were kept. */
async function fillPrintedHashes(sql: RunSql, workspaceId: string, documents: { hash: string; printed: string }[]): Promise<void> {
  await sql(
    Prisma.sql`UPDATE graphql_documents AS d SET printed_hash = f.printed
      FROM unnest(${documents.map((d) => d.hash)}::text[], ${documents.map((d) => d.printed)}::text[]) AS f(hash, printed)
      WHERE d.workspace_id = ${workspaceId}::uuid AND d.hash = f.hash AND d.printed_hash IS NULL`,
  );
}

/** Enough for every operation of a few large apps in each of many workspaces. */
export const DOCUMENT_CACHE_LIMITS = { entries: 5000, characters: 16 * 1024 * 1024 };

/**
 * Registered documents read from the database, each kept in memory once found: a document never
 * changes once stored (its id is its text's hash), so a kept copy is never stale. At most
 * `limits.entries` documents and `limits.characters` characters in all are kept, the least
 * recently used dropped first. An id not found is asked again next time, since it may be
 * registered meanwhile (by any process). Concurrent lookups of one id share one statement.
 *
 * One statement finds a document by either of its ids, and brings with it the workspace's
 * documents stored before printed hashes were kept (none once filled): their printed hashes are
 * computed and stored then, so that a workspace's older documents are found by either id too.
 */
export function createDocumentStore(sql: RunSql, limits = DOCUMENT_CACHE_LIMITS): DocumentStore {
  // Map iteration follows insertion order: re-inserting on use keeps the least recently used first.
  const kept = new Map<string, string>();
  const loading = new Map<string, Promise<string | null>>();
  let characters = 0;

  const keep = (key: string, body: string) => {
    if (body.length > limits.characters || kept.has(key)) return;
    kept.set(key, body);
    characters += body.length;
    for (const [oldest, text] of kept) {
      if (kept.size <= limits.entries && characters <= limits.characters) break;
      kept.delete(oldest);
      characters -= text.length;
    }
  };

  return {
    get(workspaceId, hash) {
      // Not an id at all: nothing to ask the database.
      if (!DOCUMENT_HASH.test(hash)) return Promise.resolve(null);
      // A hash is 64 hex characters: the workspace id after it needs no separator.
      const key = hash + workspaceId;
      const body = kept.get(key);
      if (body !== undefined) {
        kept.delete(key);
        kept.set(key, body);
        return Promise.resolve(body);
      }
      const pending = loading.get(key);
      if (pending) return pending;
      const load = sql<{ hash: string; printed_hash: string | null; body: string }>(
        Prisma.sql`SELECT hash, printed_hash, body FROM graphql_documents
          WHERE workspace_id = ${workspaceId}::uuid AND (hash = ${hash} OR printed_hash = ${hash} OR printed_hash IS NULL)`,
      )
        .then(async (rows) => {
          let found: string | null = null;
          const unfilled: { hash: string; printed: string }[] = [];
          for (const row of rows) {
            const printed = row.printed_hash ?? printedHash(row.body);
            if (row.printed_hash === null && printed !== null) unfilled.push({ hash: row.hash, printed });
            if (row.hash === hash || printed === hash) found ??= row.body;
          }
          if (unfilled.length) await fillPrintedHashes(sql, workspaceId, unfilled);
          if (found !== null) keep(key, found);
          return found;
        })
        .finally(() => loading.delete(key));
      loading.set(key, load);
      return load;
    },
    get size() {
      return kept.size;
    },
  };
}
