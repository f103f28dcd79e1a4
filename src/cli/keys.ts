/**
 * Key administration: `npm run keys -- <command>` (`node dist/cli/keys.js <command>` once built).
 * Uses the server's configuration: DATABASE_URL, or the embedded PostgreSQL under
 * EMBEDDED_DATABASE_DIR (attached to if the server is running, started for the duration of the
 * command if not).
 */
import { runKeysTool } from './keys-tool';

void runKeysTool(process.argv.slice(2), process.env, {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
}).then((code) => {
  process.exitCode = code;
});
