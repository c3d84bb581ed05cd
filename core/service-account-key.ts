/**
 * Google Cloud service account keys (the JSON file a service account's key is downloaded as): what makes one
 * usable, checked once here for the boot-time check (config/env.ts) and the Vertex provider (providers/vertex).
 */

/** The fields of a service account key file (`type: "service_account"`) the gateway reads. */
export interface ServiceAccountKey {
  type: 'service_account';
  client_email: string;
  private_key: string;
  private_key_id?: string;
  project_id?: string;
  token_uri?: string;
}

/**
 * A service account key from its JSON text, or a reason it is not one (config/env.ts refuses it at boot with
 * that reason; the provider then never sees a bad key).
 */
export function parseServiceAccountKey(text: string): ServiceAccountKey | string {
  let key: unknown;
  try {
    key = JSON.parse(text);
  } catch {
    return 'is not JSON';
  }
  if (!key || typeof key !== 'object') return 'is not a JSON object';
  const { type, client_email: email, private_key: privateKey, token_uri: tokenUri } = key as Record<string, unknown>;
  if (type !== 'service_account') return `is not a service account key (type ${JSON.stringify(type ?? null)}, expected "service_account")`;
  if (typeof email !== 'string' || !email.includes('@')) return 'has no client_email';
  if (typeof privateKey !== 'string' || !privateKey.includes('PRIVATE KEY')) return 'has no PEM private_key';
  if (tokenUri !== undefined && (typeof tokenUri !== 'string' || !isTokenUrl(tokenUri))) return 'has a token_uri that is not an https URL (or http on this machine)';
  return key as ServiceAccountKey;
}

/** A token endpoint the gateway may send a signed assertion to: https, or plain http on this machine only. */
export function isTokenUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.protocol === 'https:' || (parsed.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname));
}
