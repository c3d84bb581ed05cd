import pino from 'pino';

/** One structured logger for the process; `LOG_LEVEL` tunes it (tests default to `warn`). */
export const log = pino({
  level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'error' : 'info'),
  base: { pid: process.pid },
  redact: { paths: ['req.headers.authorization', 'headers.authorization', 'apiKey', 'key'], censor: '[redacted]' },
});

export type Logger = typeof log;
