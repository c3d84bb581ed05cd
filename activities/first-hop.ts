/**
 * A request's first hop, begun in the process that accepted the request while its workflow starts.
 *
 * Starting a run takes a round trip to the Temporal server, and the run's first task must then be activated
 * and dispatch the hop's activity: several milliseconds in which the request used to wait for nothing else.
 * The first hop's hold and model call now go on during that time, in this process, with the same steps and
 * the same reservation id (`<workflow id>:0`) as the hop's activity (activities/hop.ts). What a hop may not
 * do before its run exists waits at a gate: settling the charge (a plain hop), writing the first byte to the
 * client (a stream).
 *
 * - The gate opens once the run is known to exist and to run on this process (`confirm`, after an eager
 *   start), or once the hop's activity takes the hop over (`claim`), whichever comes first.
 * - The hop's activity claims the work in flight instead of doing it again, and returns its outcome (a
 *   stream's activity heartbeats its progress meanwhile): the run's history records the hop as always.
 * - A run that could not be started (`abandon`) stops the hop at the gate and gives its hold back.
 * - A hop that nobody confirmed or claimed (its run went to another worker, which holds and calls for
 *   itself under the same reservation id) is dropped after a while, its hold left to that run; the hold
 *   sweeper releases a hold whose run never existed.
 *
 * What differs from running the hop in the activity: if this process dies after the first hop called its
 * model but before the run's own activity took it over, the call was paid upstream for nothing (the run,
 * re-run elsewhere, calls again; the client is charged once). Holds end as before.
 */
import type { Tracer } from '@opentelemetry/api';
import { log } from '../core/log';

/** Why a first hop stopped at its gate: its run was not started here (or was never started). */
export class FirstHopStopped extends Error {
  constructor(reason: string) {
    super(`the first hop stopped at its gate: ${reason}`);
    this.name = 'FirstHopStopped';
  }
}

/** What the work of a first hop gets: its gate, and a signal that aborts what it is waiting on upstream. */
export interface FirstHopControl {
  /** Resolves when the hop may go on past the point of no return; rejects with FirstHopStopped otherwise. */
  gate(): Promise<void>;
  signal: AbortSignal;
}

export interface FirstHop<T, W> {
  readonly reservationId: string;
  readonly model: string;
  /** The hop's outcome, as its activity would have returned it (a failure as it would have thrown it). */
  readonly outcome: Promise<T>;
  /** Per-kind state shared with the activity that claims it (a stream's progress). */
  readonly watch: W;
  /** The run exists and runs on this process: the hop goes on past its gate. */
  confirm(): void;
  /** The run was not started: the hop stops at its gate and its hold is given back. */
  abandon(reason: string): void;
  /**
   * The run ended without the hop (cancelled, terminated, timed out): what it waits on upstream is aborted
   * and it does not go past its gate (a settlement already under way completes); its hold is its run's (the
   * run gives it back, or the hold sweeper does).
   */
  stop(reason: string): void;
}

export interface FirstHopTimings {
  /** How long a first hop nobody confirmed or claimed waits before it is dropped. */
  unclaimedMs: number;
  /** How long a first hop that ended stays to be claimed (its activity usually claims it within milliseconds). */
  endedMs: number;
}

const TIMINGS: FirstHopTimings = { unclaimedMs: 60_000, endedMs: 60_000 };

class Entry<T, W> implements FirstHop<T, W> {
  readonly outcome: Promise<T>;
  private readonly gatePromise: Promise<void>;
  private openGate!: () => void;
  private shutGate!: (err: Error) => void;
  private readonly abort = new AbortController();
  private confirmed = false;
  private taken = false;
  private ended = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly hops: FirstHops,
    readonly reservationId: string,
    readonly model: string,
    name: string,
    readonly watch: W,
    work: (control: FirstHopControl) => Promise<T>,
  ) {
    this.gatePromise = new Promise<void>((resolve, reject) => { this.openGate = resolve; this.shutGate = reject; });
    this.gatePromise.catch(() => undefined); // a shut gate only matters to a hop that reaches it
    // Checked when reached: a hop stopped after its gate opened does not go past it either.
    const gate = () => (this.abort.signal.aborted ? Promise.reject(this.abort.signal.reason as Error) : this.gatePromise);
    this.outcome = hops.traced(`FirstHop:${name}`, () => work({ gate, signal: this.abort.signal }));
    // Nobody may be waiting for it (a dropped hop): its failure is the claiming activity's to report.
    this.outcome.catch(() => undefined).finally(() => {
      this.ended = true;
      if (!this.taken) this.arm(hops.timings.endedMs);
    });
    this.arm(hops.timings.unclaimedMs);
  }

  confirm(): void {
    this.confirmed = true;
    this.openGate();
  }

  abandon(reason: string): void {
    this.hops.forget(this);
    this.halt(reason);
    // Once the work stopped (at the gate, or its call aborted), whatever it held is given back.
    void this.outcome.catch(() => undefined).then(() => this.hops.giveBack(this.reservationId, reason));
  }

  /** The hop's activity takes it over: it may go on past the gate now. */
  claimed(): void {
    this.taken = true;
    this.clearTimer();
    this.openGate();
  }

  stop(reason: string): void {
    this.hops.forget(this);
    this.halt(reason);
  }

  private halt(reason: string): void {
    this.clearTimer();
    const stopped = new FirstHopStopped(reason);
    this.shutGate(stopped);
    this.abort.abort(stopped);
  }

  /** Drops a hop that waited too long: one still short of its gate stops there (its hold is its run's). */
  private arm(ms: number): void {
    this.clearTimer();
    this.timer = setTimeout(() => {
      // A confirmed hop still going (a long stream) stays until it ends: its activity may still come to claim it.
      if (this.confirmed && !this.ended) return;
      this.hops.forget(this);
      if (!this.confirmed) this.halt('nobody claimed it');
    }, ms);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

export interface FirstHopsOptions {
  /** Gives back a hold whose run was never started (idempotent; nothing held is nothing to do). */
  release(reservationId: string, reason: string): Promise<unknown>;
  /** With tracing on, each first hop is a span (`FirstHop:<activity>`) of the request's trace. */
  tracer?: Tracer | null;
  timings?: FirstHopTimings;
}

/** This process's first hops in flight, by reservation id. */
export class FirstHops {
  private readonly entries = new Map<string, Entry<unknown, unknown>>();
  readonly timings: FirstHopTimings;

  constructor(private readonly opts: FirstHopsOptions) {
    this.timings = opts.timings ?? TIMINGS;
  }

  /** Begins the first hop of reservation `reservationId` (`name`: the activity it stands in for). */
  begin<T, W>(reservationId: string, model: string, name: string, watch: W, work: (control: FirstHopControl) => Promise<T>): FirstHop<T, W> {
    const entry = new Entry<T, W>(this, reservationId, model, name, watch, work);
    this.entries.set(reservationId, entry as Entry<unknown, unknown>);
    return entry;
  }

  /**
   * The hop's activity claims the work begun for its hop (once): null when there is none here, or it was
   * begun for another model (then the activity runs the hop itself).
   */
  claim<T, W>(reservationId: string, model: string): FirstHop<T, W> | null {
    const entry = this.entries.get(reservationId);
    if (!entry || entry.model !== model) return null;
    this.entries.delete(reservationId);
    entry.claimed();
    return entry as unknown as FirstHop<T, W>;
  }

  get size(): number {
    return this.entries.size;
  }

  /** @internal */
  forget(entry: Entry<unknown, unknown>): void {
    if (this.entries.get(entry.reservationId) === entry) this.entries.delete(entry.reservationId);
  }

  /** @internal */
  traced<T>(name: string, work: () => Promise<T>): Promise<T> {
    const tracer = this.opts.tracer;
    if (!tracer) return work();
    return tracer.startActiveSpan(name, (span) => work().finally(() => span.end()));
  }

  /** @internal */
  async giveBack(reservationId: string, reason: string): Promise<void> {
    try {
      await this.opts.release(reservationId, reason);
    } catch (err) {
      // The hold sweeper releases it once it is old enough (its run does not exist).
      log.warn({ err, reservationId }, 'could not give back the hold of a first hop whose run was not started');
    }
  }
}
