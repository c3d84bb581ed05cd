/** Starts the Temporal CLI's dev server bound to 127.0.0.1, with the gateway's search attributes. */
import path from 'node:path';
import { GATEWAY_SEARCH_ATTRIBUTES } from '../workflows/contracts';
import { isPortOpen, startProcess, waitUntil, type ManagedProcess } from './processes';

export interface TemporalDevServer {
  address: string;
  uiUrl: string;
  process: ManagedProcess;
}

export async function startTemporalDevServer(opts: {
  binary: string;
  port: number;
  uiPort: number;
  /** SQLite file; absent keeps everything in memory (tests). */
  dbFile?: string;
  logFile: string;
  /** The gateway's codec endpoint, where the Web UI decodes the encrypted histories (api/codec). */
  codecEndpoint?: string;
}): Promise<TemporalDevServer> {
  const args = [
    'server', 'start-dev',
    '--ip', '127.0.0.1',
    '--port', String(opts.port),
    '--ui-port', String(opts.uiPort),
    '--log-level', 'warn',
    // Eager workflow start lets an API process that also runs a worker skip a round trip per request.
    '--dynamic-config-value', 'system.enableEagerWorkflowStart=true',
    // An activity scheduled on the workflow's own task queue can start on the worker that scheduled it
    // (the stream activity, in the API process holding the connection), skipping a dispatch.
    '--dynamic-config-value', 'system.enableActivityEagerExecution=true',
    // WAL with synchronous=NORMAL keeps committed state across a process crash at a fraction of the fsyncs.
    '--sqlite-pragma', 'journal_mode=wal',
    '--sqlite-pragma', 'synchronous=normal',
  ];
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  if (opts.codecEndpoint) args.push('--ui-codec-endpoint', opts.codecEndpoint);
  for (const key of GATEWAY_SEARCH_ATTRIBUTES) args.push('--search-attribute', `${key.name}=Keyword`);
  const proc = startProcess('temporal', opts.binary, args, { logFile: opts.logFile, cwd: opts.dbFile ? path.dirname(opts.dbFile) : undefined });
  await waitUntil('Temporal dev server', () => isPortOpen('127.0.0.1', opts.port), { timeoutMs: 60_000, proc });
  await waitUntil('Temporal Web UI', () => isPortOpen('127.0.0.1', opts.uiPort), { timeoutMs: 30_000, proc });
  return { address: `127.0.0.1:${opts.port}`, uiUrl: `http://127.0.0.1:${opts.uiPort}`, process: proc };
}
