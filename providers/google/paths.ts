/** URLs on a Gemini API host: every path sits under `/v1beta`, which the connection's base URL never carries. */
import type { Connection } from '../connection';

/** `/v1beta/<path>` on this host. */
export function apiUrl(connection: Connection, path: string): string {
  return connection.url(`/v1beta/${path.replace(/^\/+/, '')}`);
}

/** `models/<id>:<method>`; catalog ids may or may not carry the `models/` prefix. */
export function modelUrl(connection: Connection, model: string, method: string): string {
  return apiUrl(connection, `models/${encodeURIComponent(model.replace(/^models\//, ''))}:${method}`);
}
