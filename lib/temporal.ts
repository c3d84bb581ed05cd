/**
 * One Temporal connection per process. It is a NativeConnection so that, when the API and a worker share
 * the process, the client can start workflows eagerly on that worker (no matching round trip).
 */
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';

export interface TemporalHandles {
  connection: NativeConnection;
  client: Client;
  namespace: string;
}

export async function connectTemporal(address: string, namespace: string): Promise<TemporalHandles> {
  const connection = await NativeConnection.connect({ address });
  const client = new Client({ connection, namespace });
  return { connection, client, namespace };
}
