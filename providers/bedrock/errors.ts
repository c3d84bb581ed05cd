/**
 * Bedrock's failures as the gateway's UpstreamErrors. The SDK raises each AWS error as an exception named
 * after it; the name gives the HTTP status the failure means, and http.ts classifies that status as it
 * does every provider's (one classification for all families).
 */
import { UpstreamError } from '../../core/errors';
import { classifyHttpFailure, transportError } from '../http';

/**
 * What each of Bedrock's errors means as an HTTP status. ModelNotReady (AWS answers it with 429) is a model
 * still loading: a server-side outage that another model may serve, not the caller going too fast.
 */
const STATUS_OF: Record<string, number> = {
  ThrottlingException: 429,
  ServiceQuotaExceededException: 429,
  ModelNotReadyException: 503,
  ServiceUnavailableException: 503,
  InternalServerException: 500,
  ModelErrorException: 502,
  ModelStreamErrorException: 502,
  ModelTimeoutException: 408,
  ValidationException: 400,
  ConflictException: 409,
  ResourceNotFoundException: 404,
  AccessDeniedException: 403,
  UnrecognizedClientException: 403,
  InvalidSignatureException: 403,
  ExpiredTokenException: 403,
  IncompleteSignatureException: 403,
};

interface AwsError {
  name?: string;
  message?: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string> };
}

/** Whether `err` is an error the service answered (an AWS exception), not a transport failure. */
function isServiceError(err: unknown): err is AwsError {
  return !!err && typeof err === 'object' && ('$fault' in err || typeof (err as AwsError).$metadata?.httpStatusCode === 'number');
}

/** One failed Bedrock call as the UpstreamError it is; `timedOut`: the gateway's deadline aborted it. */
export function bedrockFailure(provider: string, err: unknown, timedOut: boolean, signal?: AbortSignal): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (timedOut || signal?.aborted) return transportError(provider, err, timedOut, signal);
  const name = (err as AwsError | undefined)?.name ?? '';
  if (name === 'CredentialsProviderError') return credentialsFailure(provider, err, 'chain');
  if (isServiceError(err) || name in STATUS_OF) {
    const aws = err as AwsError;
    const status = STATUS_OF[name] ?? aws.$metadata?.httpStatusCode ?? (aws.$fault === 'server' ? 500 : 400);
    const headers = new Headers(aws.$response?.headers ?? {});
    return classifyHttpFailure(provider, status, headers, JSON.stringify({ message: `${name ? `${name}: ` : ''}${aws.message ?? ''}` }));
  }
  return transportError(provider, err, false, signal);
}

/**
 * Credentials that could not be had. From the default chain: none found on this machine, the provider is
 * not configured. From STS: a refused AssumeRole is the operator's problem (502 provider_auth_failed, no
 * fallback), an STS that did not answer is transient.
 */
export function credentialsFailure(provider: string, err: unknown, source: 'chain' | 'role'): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (source === 'chain' || (err as AwsError | undefined)?.name === 'CredentialsProviderError') {
    return new UpstreamError(`${provider} has no AWS credentials (none in the environment, profile or instance role)`, { kind: 'not_configured', provider });
  }
  if (isServiceError(err) && (err.$fault === 'client' || (err.$metadata?.httpStatusCode ?? 500) < 500)) {
    return new UpstreamError(`${provider} could not assume its role: STS refused (${err.name ?? 'error'})`, {
      kind: 'caller_error', provider, upstreamStatus: 403, code: 'provider_auth_failed',
    });
  }
  const failure = isServiceError(err) ? 'STS failed' : 'STS did not answer';
  return new UpstreamError(`${provider} could not assume its role (${failure})`, { kind: 'network', provider });
}
