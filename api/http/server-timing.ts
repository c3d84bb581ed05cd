/**
 * `Server-Timing` (W3C) on model answers: where the request's time went inside the gateway, so a client, an
 * operator or the benchmark can tell the gateway's own work from the workflow's and the model's.
 *
 * - `admission`: from the request's arrival to its workflow's start (limits, auth, body, model check, chain);
 * - `start`: starting the request's workflow (eager: the server records the run and hands back its first task);
 * - `run`: from there to the answer (each hop holds, calls the model and settles). Streams, whose headers go
 *   out with their first byte, carry the first two.
 */
import type { GatewayContext } from './context';

export class RequestPhases {
  private readonly marks: Array<[name: string, at: number]> = [];
  private last: number;

  constructor(private readonly ctx: GatewayContext) {
    this.last = ctx.state.startedAt;
  }

  /** Ends the phase `name` now, and writes the header with every phase so far. */
  end(name: 'admission' | 'start' | 'run'): void {
    const now = performance.now();
    this.marks.push([name, now - this.last]);
    this.last = now;
    this.ctx.set('server-timing', this.marks.map(([phase, ms]) => `${phase};dur=${ms.toFixed(1)}`).join(', '));
  }
}
