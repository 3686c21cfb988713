import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { parse as parseCsv, CsvError } from 'csv-parse';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { RunSql } from '../db/database.js';
import { InputError } from '../errors/domain.js';
import { IMPORT_BATCH_MAX, importContacts } from '../modules/contacts/contacts.import.js';
import { startProgress, type ProgressOutput } from './progress.js';

/** The exit code of a `contacts:import` run that imported the file but refused some of its rows. */
export const SOME_ROWS_FAILED = 3;
/** The exit code of a `contacts:import` run stopped by Ctrl-C. */
export const INTERRUPTED = 130;
/** The most failed rows the summary lists; it counts the others. */
export const FAILURES_LISTED = 100;

type Format = 'csv' | 'ndjson';

const FORMATS: Record<string, Format> = { '.csv': 'csv', '.ndjson': 'ndjson', '.jsonl': 'ndjson' };

/** The columns of a CSV file that become a contact's fields; any other column is ignored. */
const CSV_COLUMNS = ['name', 'email', 'phone'] as const;

/** One row of the file: the line it starts on (from 1, the header included) and what it holds. */
export interface FileRow {
  line: number;
  row: unknown;
}

export interface ImportSummary {
  /** The rows the file holds. */
  rows: number;
  created: number;
  matched: number;
  failed: number;
  /** The first FAILURES_LISTED failed rows, in file order. */
  failures: { line: number; errors: Record<string, string[]> }[];
  /** The failed rows not listed. */
  failuresOmitted: number;
  /** Ctrl-C stopped the run: only the rows up to `lastLine` were imported. */
  interrupted?: true;
  /** The last line imported, when the run was stopped. */
  lastLine?: number;
}

export interface ImportOptions {
  workspaceId: string;
  channelId: string | null;
  file: string;
  /** Where progress goes (a bar on a terminal, else one line a second). */
  output: ProgressOutput;
  /** Registers what Ctrl-C does instead of ending the process; returns its removal. */
  onInterrupt?: ((stop: () => void) => () => void) | undefined;
  batchSize?: number;
}

function formatOf(file: string): Format {
  const format = FORMATS[path.extname(file).toLowerCase()];
  if (!format) throw new InputError(`--file ${file}: the name must end in .csv, .ndjson or .jsonl (CSV with a header row, or one JSON object a line)`);
  return format;
}

function unreadable(file: string, error: NodeJS.ErrnoException): InputError {
  return new InputError(`cannot read --file ${file}: ${error.code ?? error.message}`);
}

/** The lines a CSV record spans: csv-parse counts the line it ends on, and its raw text holds its own line breaks. */
function csvStartLine(endLine: number, raw: string | undefined): number {
  const own = (raw ?? '').replace(/^(\r?\n)+/, '').replace(/\r?\n$/, '');
  return endLine - (own.match(/\n/g)?.length ?? 0);
}

async function* csvRows(file: string, stream: NodeJS.ReadableStream): AsyncGenerator<FileRow> {
  let header: string[] = [];
  const parser = stream.pipe(
    parseCsv({
      bom: true,
      skip_empty_lines: true,
      info: true,
      raw: true,
      columns: (names: string[]) => {
        header = names.map((name) => name.trim().toLowerCase());
        if (!header.includes('name') || !(header.includes('email') || header.includes('phone'))) {
          throw new InputError(`--file ${file}: the first line must name the columns: name, and email and/or phone (found ${names.join(',') || 'nothing'})`);
        }
        return header;
      },
    }),
  );
  stream.on('error', (error) => parser.destroy(error));
  try {
    for await (const { record, info, raw } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number }; raw: string }>) {
      const row: Record<string, string> = {};
      for (const column of CSV_COLUMNS) if (record[column] !== undefined) row[column] = record[column];
      yield { line: csvStartLine(info.lines, raw), row };
    }
  } catch (error) {
    if (error instanceof CsvError) throw new InputError(`--file ${file} is not valid CSV: ${error.message}`);
    throw error;
  }
}

async function* ndjsonRows(file: string, stream: NodeJS.ReadableStream): AsyncGenerator<FileRow> {
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  for await (const text of lines) {
    line++;
    const trimmed = line === 1 ? text.replace(/^\uFEFF/, '').trim() : text.trim();
    if (!trimmed) continue;
    try {
      yield { line, row: JSON.parse(trimmed) };
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      lines.close();
      throw new InputError(`--file ${file} line ${line} is not JSON: ${error.message}`);
    }
  }
}

/** The rows of `file`, read as a stream: CSV with a header row, or one JSON value a line (blank lines skipped). */
export async function* fileRows(file: string): AsyncGenerator<FileRow> {
  const format = formatOf(file);
  // A missing or unreadable file is told before anything is parsed.
  const handle = await fs.promises.open(file).catch((error: NodeJS.ErrnoException) => {
    throw unreadable(file, error);
  });
  const stream = handle.createReadStream();
  try {
    yield* format === 'csv' ? csvRows(file, stream) : ndjsonRows(file, stream);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).syscall) throw unreadable(file, error as NodeJS.ErrnoException);
    throw error;
  } finally {
    stream.destroy();
  }
}

async function* batchesOf(rows: AsyncIterable<FileRow>, size: number): AsyncGenerator<FileRow[]> {
  let batch: FileRow[] = [];
  for await (const row of rows) {
    batch.push(row);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

const sqlOf =
  (prisma: PrismaClient): RunSql =>
  (statement) =>
    prisma.$queryRaw(statement);

/**
 * `contacts:import` (docs/contacts.md, "Importing from a file"): reads the file through once to
 * count its rows — a line that is not CSV or JSON stops it there, before anything is imported —
 * then again in batches of IMPORT_BATCH_MAX, each imported by `importContacts` as one request of
 * `POST /contacts/import` is (whole or not at all). Ctrl-C stops it after the batch under way.
 */
export async function importFile(prisma: PrismaClient, options: ImportOptions): Promise<ImportSummary> {
  let rows = 0;
  for await (const _ of fileRows(options.file)) rows++;
  if (!rows) throw new InputError(`--file ${options.file} holds no contacts`);
  const summary: ImportSummary = { rows, created: 0, matched: 0, failed: 0, failures: [], failuresOmitted: 0 };
  const counts = () => ({ created: summary.created, matched: summary.matched, failed: summary.failed });
  // Ctrl-C is taken before the first progress line shows: from then on it stops after the batch under way.
  let stopped = false;
  const release = options.onInterrupt?.(() => {
    if (!stopped) options.output.line('stopping after the batch under way (Ctrl-C)…');
    stopped = true;
  });
  const progress = startProgress(options.output, {
    format: 'contacts [{bar}] {percentage}% | {value}/{total} | created {created} matched {matched} failed {failed}',
    total: rows,
    value: 0,
    payload: counts(),
    line: (value, total, c) =>
      `${new Date().toISOString()} ${value}/${total} (${total ? Math.floor((value * 100) / total) : 100}%) created=${c.created} matched=${c.matched} failed=${c.failed}`,
  });
  const sql = sqlOf(prisma);
  let done = 0;
  let lastLine = 0;
  try {
    for await (const batch of batchesOf(fileRows(options.file), options.batchSize ?? IMPORT_BATCH_MAX)) {
      if (stopped) break;
      let results;
      try {
        results = await importContacts(sql, { workspaceId: options.workspaceId, channelId: options.channelId }, batch.map((row) => row.row));
      } catch (error) {
        const message = (error as Error).message.split('\n')[0];
        throw new Error(done ? `${message} (the rows up to line ${lastLine}, ${done} of ${rows}, were imported; the rest were not)` : message);
      }
      for (const result of results) {
        summary[result.status]++;
        if (result.status !== 'failed') continue;
        if (summary.failures.length < FAILURES_LISTED) summary.failures.push({ line: batch[result.index]!.line, errors: result.errors ?? {} });
        else summary.failuresOmitted++;
      }
      done += batch.length;
      lastLine = batch.at(-1)!.line;
      progress.update(done, counts());
    }
  } finally {
    release?.();
    progress.stop();
  }
  if (stopped && done < rows) {
    options.output.line(
      done
        ? `interrupted: the rows up to line ${lastLine} (${done} of ${rows}) were imported, the others not; importing the file again matches the imported rows`
        : `interrupted: nothing was imported`,
    );
    return { ...summary, interrupted: true, lastLine };
  }
  return summary;
}

/** The exit code of a summary: 0 when every row was imported, SOME_ROWS_FAILED or INTERRUPTED otherwise. */
export function importExitCode(summary: ImportSummary): number {
  if (summary.interrupted) return INTERRUPTED;
  return summary.failed ? SOME_ROWS_FAILED : 0;
}
