/**
 * A batch's input, checked line by line exactly as the endpoint's own route checks a request before its run
 * starts: the body against the endpoint's schema, its references (files, stored responses) against the
 * workspace, and the model against the catalog and the key (domain/model-eligibility.ts), the handler's own
 * check of the model's parameters, then whether anyone's credentials serve the model. A line naming a model
 * the workspace cannot use fails the batch in `validating` with that line's error, as the route refuses the
 * request before its run: nothing is held, and no line of the batch runs. A line that passes is stored as
 * the request its run will send (the same object the synchronous route hands its workflow).
 */
import type { Knex } from 'knex';
import { GatewayError } from '../core/errors';
import { checkUsable, eligibleModel, type ModelAccess } from '../domain/model-eligibility';
import type { ModelCatalog } from '../domain/model-catalog';
import type { BatchLineError } from '../domain/batches';
import { handlerFor } from './index';
import type { Endpoint } from './types';
import { validateChatCompletionBody } from './chat/body';
import { ownReferencedFiles } from './chat/file-references';
import { validateResponsesBody } from './responses/body';
import { prepareResponsesRequest } from './responses/request';
import { validateEmbeddingsBody } from './embeddings/body';
import { validateCompletionBody } from './completions/body';
import { validateModerationBody } from './moderations/body';
import { validateMessagesBody } from './messages/body';
import { inMessagesTerms, type MessagesRequest } from './messages/request';

interface LineContext {
  db: Knex;
  workspaceId: string;
  /** The request id the line will run under (Responses items are named after it). */
  requestId: string;
}

interface BatchEndpoint {
  endpoint: Endpoint;
  /** The request the line's run sends, from its validated body (the route's own preparation). */
  prepare(raw: unknown, ctx: LineContext): Promise<{ model: string; stream: boolean; request: unknown }>;
}

const BATCH_ENDPOINTS: Record<string, BatchEndpoint> = {
  '/v1/chat/completions': {
    endpoint: 'chat.completions',
    async prepare(raw, ctx) {
      const body = validateChatCompletionBody(raw);
      await ownReferencedFiles(ctx.db, ctx.workspaceId, body.messages);
      return { model: body.model, stream: body.stream === true, request: body };
    },
  },
  '/v1/responses': {
    endpoint: 'responses',
    async prepare(raw, ctx) {
      const body = validateResponsesBody(raw);
      const request = await prepareResponsesRequest(ctx.db, ctx.workspaceId, ctx.requestId, body);
      return { model: body.model, stream: body.stream === true, request };
    },
  },
  '/v1/embeddings': {
    endpoint: 'embeddings',
    async prepare(raw) {
      const body = validateEmbeddingsBody(raw);
      return { model: body.model, stream: false, request: body };
    },
  },
  '/v1/completions': {
    endpoint: 'completions',
    async prepare(raw) {
      const body = validateCompletionBody(raw);
      return { model: body.model, stream: body.stream === true, request: body };
    },
  },
  '/v1/moderations': {
    endpoint: 'moderations',
    async prepare(raw) {
      const body = validateModerationBody(raw);
      return { model: body.model, stream: false, request: body };
    },
  },
  // Anthropic's Message Batches: their requests are lines of this endpoint (never named in an OpenAI batch).
  '/v1/messages': {
    endpoint: 'messages',
    async prepare(raw) {
      const body = validateMessagesBody(raw);
      const request: MessagesRequest = { body, beta: null };
      return { model: body.model, stream: body.stream === true, request };
    },
  },
};

/** The endpoints an OpenAI batch may name (OpenAI's own list). */
export const OPENAI_BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/completions', '/v1/moderations'] as const;
export const MESSAGES_BATCH_ENDPOINT = '/v1/messages';

export function batchEndpoint(url: string): Endpoint {
  const spec = BATCH_ENDPOINTS[url];
  if (!spec) throw new Error(`no batch endpoint ${url}`);
  return spec.endpoint;
}

export interface CheckedLine {
  customId: string;
  model: string;
  request: unknown;
}

/** A line's problem, named by its 1-based line number. */
export class BatchLineProblem extends Error {
  constructor(readonly error: BatchLineError) {
    super(error.message);
  }
}

function problem(line: number, code: string, message: string, param: string | null = null): BatchLineProblem {
  return new BatchLineProblem({ code, message, param, line });
}

/**
 * Checks one request of a batch (`{custom_id, method, url, body}` as parsed from its line) against the
 * batch's endpoint, the catalog and the caller's access to models; throws a BatchLineProblem naming the line.
 */
export async function checkBatchRequest(
  raw: unknown, opts: { line: number; url: string; catalog: ModelCatalog; access: ModelAccess } & LineContext,
): Promise<CheckedLine> {
  const { line } = opts;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw problem(line, 'invalid_request', 'Each line must be a JSON object.');
  const req = raw as Record<string, unknown>;
  for (const key of Object.keys(req)) {
    if (!['custom_id', 'method', 'url', 'body'].includes(key)) throw problem(line, 'invalid_request', `Unrecognized field '${key}'.`, key);
  }
  if (typeof req.custom_id !== 'string' || req.custom_id.length === 0) throw problem(line, 'missing_required_parameter', "Missing or empty 'custom_id'.", 'custom_id');
  if (req.custom_id.length > 512) throw problem(line, 'invalid_value', "'custom_id' is longer than 512 characters.", 'custom_id');
  if (req.method !== 'POST') throw problem(line, 'invalid_method', `'method' must be 'POST', got ${JSON.stringify(req.method ?? null)}.`, 'method');
  if (req.url !== opts.url) throw problem(line, 'invalid_url', `'url' must be the batch's endpoint '${opts.url}', got ${JSON.stringify(req.url ?? null)}.`, 'url');
  if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) throw problem(line, 'invalid_request', "'body' must be a JSON object.", 'body');
  const spec = BATCH_ENDPOINTS[opts.url];
  try {
    const prepared = await spec.prepare(req.body, opts);
    if (prepared.stream) throw problem(line, 'invalid_value', "'stream' is not supported in a batch.", 'body.stream');
    const handler = handlerFor(spec.endpoint);
    const record = await eligibleModel(opts.catalog, { model: prepared.model, modality: handler.modality, allowedModels: opts.access.allowedModels });
    handler.check(record, prepared.request);
    await checkUsable(record, opts.access, prepared.model);
    return { customId: req.custom_id, model: prepared.model, request: prepared.request };
  } catch (err) {
    if (err instanceof BatchLineProblem) throw err;
    const found = spec.endpoint === 'messages' ? inMessagesTerms(err) : err;
    if (found instanceof GatewayError) throw problem(line, found.code ?? 'invalid_request', found.message, found.param ? `body.${found.param}` : 'body');
    throw err;
  }
}

/** Parses one line of the input file (1-based `line`); a line that is not JSON is that line's problem. */
export function parseBatchLine(text: string, line: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw problem(line, 'invalid_json_line', `Line ${line} is not valid JSON.`);
  }
}
