/**
 * Custom search attributes every request workflow carries, so an operator finds any request in the
 * Temporal Web UI by request id, workspace, key or model. The dev server registers them at start
 * (stack/temporal.ts); against another cluster the worker registers them on boot.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const RequestIdKey = defineSearchAttributeKey('GatewayRequestId', SearchAttributeType.KEYWORD);
export const WorkspaceIdKey = defineSearchAttributeKey('GatewayWorkspaceId', SearchAttributeType.KEYWORD);
export const ApiKeyIdKey = defineSearchAttributeKey('GatewayApiKeyId', SearchAttributeType.KEYWORD);
export const ModelKey = defineSearchAttributeKey('GatewayModel', SearchAttributeType.KEYWORD);
export const EndpointKey = defineSearchAttributeKey('GatewayEndpoint', SearchAttributeType.KEYWORD);

export const GATEWAY_SEARCH_ATTRIBUTES = [RequestIdKey, WorkspaceIdKey, ApiKeyIdKey, ModelKey, EndpointKey];
