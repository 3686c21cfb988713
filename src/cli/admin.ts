import { ConfigError, loadEnv } from '../env.js';
import { runAdmin } from './run-admin.js';

try {
  const code = await runAdmin(process.argv.slice(2), loadEnv(), {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
  });
  process.exitCode = code;
} catch (error) {
  // One line, whatever the error: a configuration error lists each bad variable, joined.
  const message = error instanceof ConfigError ? error.message.split('\n').slice(1).map((l) => l.trim()).join('; ') : (error as Error).message.split('\n')[0];
  process.stderr.write(`error: ${error instanceof ConfigError ? 'invalid configuration: ' : ''}${message}\n`);
  process.exitCode = 1;
}
