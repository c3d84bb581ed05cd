/**
 * The simulated provider's memory of video submissions by idempotency key: a submission repeated with the
 * same key gets the first job back instead of a second one. Kept in memory, or (with a state directory)
 * in `video-submissions.jsonl` there, one line per job it accepted, so it outlives the process the way a
 * real provider's memory outlives our worker, and a test can count the jobs it was given.
 */
import fs from 'node:fs';
import path from 'node:path';

export const SUBMISSIONS_FILE = 'video-submissions.jsonl';

export interface AcceptedSubmission {
  key: string;
  operationId: string;
}

export class VideoSubmissions {
  private readonly memory = new Map<string, string>();

  constructor(private readonly stateDir?: string) {}

  /** The operation id of the job first accepted under `key`, or the one `create` makes (then remembered). */
  accept(key: string | undefined, create: () => string): string {
    if (!key) return create();
    const known = this.memory.get(key) ?? this.fromFile(key);
    if (known) return known;
    const operationId = create();
    this.memory.set(key, operationId);
    if (this.stateDir) {
      fs.mkdirSync(this.stateDir, { recursive: true });
      fs.appendFileSync(path.join(this.stateDir, SUBMISSIONS_FILE), `${JSON.stringify({ key, operationId } satisfies AcceptedSubmission)}\n`);
    }
    return operationId;
  }

  private fromFile(key: string): string | undefined {
    if (!this.stateDir) return undefined;
    return readAcceptedSubmissions(this.stateDir).find((s) => s.key === key)?.operationId;
  }
}

/** Every job the simulated provider accepted with a state directory, in order. */
export function readAcceptedSubmissions(stateDir: string): AcceptedSubmission[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(stateDir, SUBMISSIONS_FILE), 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as AcceptedSubmission);
}
