/**
 * Anthropic's side of the Messages API tests: the official SDK pointed at a gateway, and the vendored
 * schemas (test/schemas/anthropic) every answer and streamed event is checked against.
 */
import Anthropic from '@anthropic-ai/sdk';
import Ajv from 'ajv';
import type { Knex } from 'knex';
import { getBalance, ledgerSum } from '../../domain/ledger';
import { expect } from 'chai';
import components from '../schemas/anthropic/components.json';

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(components);

export function expectAnthropicShape(component: string, value: unknown): void {
  const validate = ajv.getSchema(`${components.$id}#/components/schemas/${component}`);
  if (!validate) throw new Error(`no component ${component}`);
  const ok = validate(value);
  expect(ok, `${component}: ${ajv.errorsText(validate.errors, { separator: '\n' })}\n${JSON.stringify(value).slice(0, 800)}`).to.equal(true);
}

export function anthropicClient(baseURL: string, apiKey: string, opts: { authToken?: boolean } = {}): Anthropic {
  return opts.authToken
    ? new Anthropic({ baseURL, authToken: apiKey, apiKey: null, maxRetries: 0, timeout: 60_000 })
    : new Anthropic({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });
}

export interface SseEvent { event: string | undefined; data: any }

/** A raw event stream's events, each `data` parsed (`event:` must repeat the data's `type`). */
export function parseSse(text: string): SseEvent[] {
  return text.split('\n\n').filter((block) => block.trim() && !block.startsWith(':')).map((block) => {
    const lines = block.split('\n');
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
    return { event, data: JSON.parse(lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')) };
  });
}

/** Checks each event against Anthropic's schemas (MessageStreamEvent, or ErrorResponse for `error`). */
export function expectValidStream(events: SseEvent[]): void {
  for (const { event, data } of events) {
    expect(event, JSON.stringify(data)).to.equal(data.type);
    expectAnthropicShape(data.type === 'error' ? 'ErrorResponse' : 'MessageStreamEvent', data);
  }
}

/** The workspace was charged exactly what its usage records say (and its books balance). */
export async function expectChargedAsRecorded(db: Knex, workspaceId: string, grantedCredits: number): Promise<number> {
  const recorded = await db('usage_records').where({ workspace_id: workspaceId }).sum({ micro: 'credits_micro' }).first();
  const sums = await ledgerSum(db, workspaceId);
  expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
  const spent = grantedCredits * 1_000_000 - (await getBalance(db, workspaceId)).totalMicro;
  expect(spent).to.be.greaterThan(0);
  expect(spent).to.equal(Number(recorded?.micro ?? 0));
  return spent;
}
