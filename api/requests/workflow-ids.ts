import { TypedSearchAttributes } from '@temporalio/common';
import { ApiKeyIdKey, EndpointKey, ModelKey, RequestIdKey, WorkspaceIdKey } from '../../workflows/contracts';

/** Search attributes every request workflow starts with (what an operator filters on in the Web UI). */
export function requestSearchAttributes(a: { requestId: string; workspaceId: string; apiKeyId?: string; model?: string; endpoint: string }): TypedSearchAttributes {
  const pairs = [
    { key: RequestIdKey, value: a.requestId },
    { key: WorkspaceIdKey, value: a.workspaceId },
    { key: EndpointKey, value: a.endpoint },
  ];
  if (a.apiKeyId) pairs.push({ key: ApiKeyIdKey, value: a.apiKeyId });
  if (a.model) pairs.push({ key: ModelKey, value: a.model });
  return new TypedSearchAttributes(pairs);
}
