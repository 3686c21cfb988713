import { ConfigError, loadEnv } from '../env.js';
import { runAdmin } from './run-admin.js';

try {
  const code = await runAdmin(process.argv.slice(2), loadEnv(), {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
  });
  process.exitCode = code;
} catch (error) {
  process.stderr.write(`error: ${error instanceof ConfigError ? error.message : (error as Error).message.split('\n')[0]}\n`);
  process.exitCode = 1;
}
