import { loadEnv } from '../env.js';
import { runAdmin } from './run-admin.js';

try {
  const code = await runAdmin(process.argv.slice(2), loadEnv(), {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
    terminal: process.stderr,
  });
  process.exitCode = code;
} catch (error) {
  // One line, whatever the error; a configuration error names every bad variable on it.
  process.stderr.write(`error: ${(error as Error).message.split('\n')[0]}\n`);
  process.exitCode = 1;
}
