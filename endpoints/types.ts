/**
 * What every model endpoint (chat, embeddings, images, speech, transcription, music) plugs into the one
 * request workflow: a capability check, a reservation estimate, and the provider call that returns the
 * client's response together with its exact charge.
 */
import type { Knex } from 'knex';
import type { ModelCatalog } from '../domain/model-catalog';
import type { Modality, ModelRecord } from '../catalog/types';
import type { ObjectStorage } from '../infra/storage';
import type { ProviderRegistry } from '../providers/registry';
import type { SimulationDirective } from '../providers/types';
import type { ServedBy } from './model-adapter';

export type Endpoint =
  | 'chat.completions'
  | 'responses'
  | 'completions'
  | 'embeddings'
  | 'images.generations'
  | 'images.edits'
  | 'audio.speech'
  | 'audio.transcriptions'
  | 'music.generations'
  | 'moderations'
  | 'images.variations'
  | 'audio.translations'
  | 'messages';

export interface CallEnv {
  requestId: string;
  /** Unix seconds the request was accepted (response `created`). */
  created: number;
  attempt: number;
  simulate?: SimulationDirective;
  signal?: AbortSignal;
  providers: ProviderRegistry;
  storage: ObjectStorage;
  catalog: ModelCatalog;
  /** The requesting workspace and the database, for handlers that read its resources (chat file ids). */
  workspaceId?: string;
  db?: Knex;
  /** Written with the deployment that answered, for the usage record (endpoints/model-adapter.ts). */
  served?: ServedBy;
}

export interface CallUsage {
  inputTokens: number;
  outputTokens: number;
  /** Non-token units (images, seconds, characters), recorded with the usage. */
  units?: Record<string, number>;
}

/** The client's answer: JSON, or bytes kept in object storage (audio) that the API streams back. */
export type EndpointResponse =
  | { kind: 'json'; body: Record<string, unknown> }
  | { kind: 'binary'; storageKey: string; contentType: string; bytes: number };

export interface CallOutcome {
  response: EndpointResponse;
  chargeMicro: number;
  usage: CallUsage;
  /** The deployment that served (a model with several, GATEWAY_DEPLOYMENTS_FILE); null or absent: its implicit one. */
  deployment?: string | null;
}

export interface EndpointHandler<Body = any> {
  endpoint: Endpoint;
  modality: Modality;
  /** Throws an InvalidRequestError when this model cannot serve this body (a fallback hop then skips it). */
  check(record: ModelRecord, body: Body): void;
  /** Micro-credits to hold before calling (an upper bound of the charge where one is known). */
  estimate(record: ModelRecord, body: Body): number;
  call(record: ModelRecord, body: Body, env: CallEnv): Promise<CallOutcome>;
}
