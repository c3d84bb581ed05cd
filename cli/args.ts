/** A small, strict flag parser: unknown or malformed flags are errors, never silently ignored. */
export class UsageError extends Error {}

export interface FlagSpec {
  [flag: string]: { type: 'string' | 'number' | 'list' | 'boolean'; required?: boolean };
}

export type FlagValues = Record<string, string | number | string[] | boolean | undefined>;

export function parseFlags(argv: string[], spec: FlagSpec): FlagValues {
  const out: FlagValues = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument '${arg}'`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
    const def = spec[name];
    if (!def) throw new UsageError(`unknown flag --${name}; expected one of ${Object.keys(spec).map((f) => `--${f}`).join(', ')}`);
    if (def.type === 'boolean') {
      out[name] = true;
      continue;
    }
    const raw = inline ?? argv[++i];
    if (raw === undefined || (inline === undefined && raw.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
    if (def.type === 'number') {
      const n = Number(raw);
      if (!Number.isFinite(n) || raw.trim() === '') throw new UsageError(`--${name} must be a number, got '${raw}'`);
      out[name] = n;
    } else if (def.type === 'list') {
      const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
      out[name] = items;
    } else {
      out[name] = raw;
    }
  }
  for (const [name, def] of Object.entries(spec)) {
    if (def.required && out[name] === undefined) throw new UsageError(`--${name} is required`);
  }
  return out;
}
