import { loadEnv } from '../env.js';
import { runAdmin } from './run-admin.js';

try {
  const code = await runAdmin(process.argv.slice(2), loadEnv(), {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
    terminal: process.stderr,
    onInterrupt(stop) {
      // Kept until the command is done: a second Ctrl-C (or the one a wrapper such as npm or tsx
      // passes on) finds it too, and the command still ends where it said it would.
      process.on('SIGINT', stop);
      return () => process.off('SIGINT', stop);
    },
  });
  process.exitCode = code;
} catch (error) {
  // One line, whatever the error; a configuration error names every bad variable on it.
  process.stderr.write(`error: ${(error as Error).message.split('\n')[0]}\n`);
  process.exitCode = 1;
}
