#!/usr/bin/env node
// `npm start` after the bootstrap: runs the service (dist/src/entry/main.js) in its own process group.
// A terminal's Ctrl-C signals the whole foreground group; without this, Postgres and the Temporal dev server (children
// of the service) would get it at the same instant as the service and stop under a worker that is still draining.
// Here only this supervisor gets it, and passes it to the service alone, which stops its parts in order.
import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const service = spawn(process.execPath, [join(root, 'dist/src/entry/main.js'), ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  detached: true,
});

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (service.exitCode === null && service.signalCode === null) service.kill(signal);
  });
}
// If this supervisor is ended another way, the service must not run on unseen.
process.on('exit', () => {
  if (service.exitCode === null && service.signalCode === null) service.kill('SIGTERM');
});

service.once('error', (err) => {
  process.stderr.write(`could not start the service: ${err.message}\n`);
  process.exit(1);
});
service.once('exit', (code, signal) => process.exit(code ?? 128 + (osConstants.signals[signal] ?? 0)));
