/** Chat on Bedrock: Converse for whole answers, ConverseStream for streamed ones. */
import { ConverseCommand, ConverseStreamCommand, type BedrockRuntimeClient, type ConverseStreamOutput } from '@aws-sdk/client-bedrock-runtime';
import type { Connection } from '../connection';
import { expectShape } from '../http';
import type { CallContext, ChatModelAdapter, ChatRequest, ChatResult, ChatStreamPart } from '../types';
import { callBedrock, startCall } from './call';
import { buildConverseRequest, parseConverseResponse, translateConverseStream } from './converse';

/** Longest silence between two events of a stream before it counts as stalled (as readSse's). */
const STREAM_IDLE_MS = 120_000;

export class BedrockChatModel implements ChatModelAdapter {
  constructor(
    private readonly connection: Connection,
    private readonly client: () => BedrockRuntimeClient,
    private readonly model: string,
  ) {}

  async doGenerate(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
    const input = buildConverseRequest(this.model, req);
    const response = await callBedrock(this.connection, ctx, (abortSignal) => this.client().send(new ConverseCommand(input), { abortSignal }));
    return parseConverseResponse(this.connection.providerId, response);
  }

  async *doStream(req: ChatRequest, ctx: CallContext): AsyncGenerator<ChatStreamPart> {
    const provider = this.connection.providerId;
    const input = buildConverseRequest(this.model, req);
    const call = startCall(this.connection, ctx);
    try {
      let stream: AsyncIterable<ConverseStreamOutput> | undefined;
      try {
        stream = (await this.client().send(new ConverseStreamCommand(input), { abortSignal: call.signal })).stream;
      } catch (err) {
        throw call.failure(err);
      }
      expectShape(provider, stream !== undefined, 'no event stream');
      call.endDeadline();
      try {
        yield* translateConverseStream(provider, watched(stream, call.timeOut));
      } catch (err) {
        throw call.failure(err);
      }
    } finally {
      call.done();
    }
  }
}

/** The stream's events, each awaited at most STREAM_IDLE_MS (the call is then aborted as timed out). */
async function* watched(stream: AsyncIterable<ConverseStreamOutput>, timeOut: () => void): AsyncGenerator<ConverseStreamOutput> {
  const events = stream[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      const idle = setTimeout(timeOut, STREAM_IDLE_MS);
      let next: IteratorResult<ConverseStreamOutput>;
      try {
        next = await events.next();
      } finally {
        clearTimeout(idle);
      }
      if (next.done) {
        finished = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!finished) await events.return?.().catch(() => undefined);
  }
}
