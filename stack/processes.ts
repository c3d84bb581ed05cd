/**
 * Child processes the project starts for itself (Temporal dev server, MinIO, embedded Postgres): each one
 * logs to a file, is awaited until it answers, and is stopped (TERM, then KILL) with the parent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  logFile: string;
  stop(): Promise<void>;
}

const running = new Set<ManagedProcess>();

export function startProcess(name: string, command: string, args: string[], opts: { logFile: string; env?: NodeJS.ProcessEnv; cwd?: string }): ManagedProcess {
  fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const out = fs.openSync(opts.logFile, 'a');
  // A watchdog shell keeps the child from outliving us when we die without running our own shutdown
  // (SIGKILL, a crashed test run): it polls our pid and terminates the child once we are gone.
  const script = [
    'trap "" INT',
    '"$@" & child=$!',
    '(while kill -0 "$WATCH_PID" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1; done; kill -TERM "$child" 2>/dev/null; sleep 5; kill -KILL "$child" 2>/dev/null) & watchdog=$!',
    'trap \'kill -TERM "$child" 2>/dev/null\' TERM',
    // `wait` returns early when a trapped signal arrives; keep waiting until the child is really gone.
    'while kill -0 "$child" 2>/dev/null; do wait "$child"; code=$?; done',
    'kill "$watchdog" 2>/dev/null',
    'exit "${code:-0}"',
  ].join('\n');
  const child = spawn('bash', ['-c', script, 'watchdog', command, ...args], {
    stdio: ['ignore', out, out], env: { ...process.env, ...opts.env, WATCH_PID: String(process.pid) }, cwd: opts.cwd, detached: true,
  });
  fs.closeSync(out);
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => child.once('exit', () => { exited = true; resolve(); }));
  const managed: ManagedProcess = {
    name,
    child,
    logFile: opts.logFile,
    async stop() {
      running.delete(managed);
      if (exited) return;
      // Only the wrapper gets TERM: it forwards to the child and waits for it, so the watchdog
      // subshell does not race it with an early KILL.
      try { process.kill(child.pid!, 'SIGTERM'); } catch { /* already gone */ }
      const killTimer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, 10_000);
      await exitPromise;
      clearTimeout(killTimer);
    },
  };
  running.add(managed);
  return managed;
}

/** Stops every process this module started (used by signal handlers). */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop()));
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a server on `count` free ports, and again on other free ones when a port was taken between its choice
 * and the server's bind (other processes on the machine pick free ports too): at most `attempts` times.
 */
export async function onFreePorts<T>(count: number, start: (ports: number[]) => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports: number[] = [];
    while (ports.length < count) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    try {
      return await start(ports);
    } catch (err) {
      if (attempt >= attempts || !/already in use/i.test(String(err))) throw err;
    }
  }
}

export async function isPortOpen(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (open: boolean) => { socket.destroy(); resolve(open); };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Polls `check` until it resolves true; fails with the tail of the process log after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean>, opts: { timeoutMs: number; proc?: ManagedProcess }): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  while (Date.now() < deadline) {
    if (opts.proc && opts.proc.child.exitCode !== null) break;
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  const tail = opts.proc ? readTail(opts.proc.logFile) : '';
  throw new Error(`${what} did not become ready${opts.proc?.child.exitCode !== null && opts.proc ? ` (exited with ${opts.proc.child.exitCode})` : ''}${tail ? `; last log lines:\n${tail}` : ''}`);
}

function readTail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
}
