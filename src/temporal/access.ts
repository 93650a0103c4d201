/**
 * A lazily connected Temporal client for the HTTP edge (proposal workflows, manual automation runs): connects on
 * first use, so the API starts and serves reads while Temporal is down, and reconnects after a failed connect.
 */
import { Client, Connection } from '@temporalio/client';

export interface TemporalAccess {
  /** The client; throws when Temporal cannot be reached (callers turn that into a clear error). */
  client(): Promise<Client>;
  close(): Promise<void>;
  /** The task queue workflows started through this access run on (default TASK_QUEUE; tests use their own). */
  taskQueue?: string;
}

export function lazyTemporalAccess(address: string, namespace: string): TemporalAccess {
  let connecting: Promise<{ connection: Connection; client: Client }> | null = null;
  const connect = () => {
    connecting ??= Connection.connect({ address, connectTimeout: '5 seconds' })
      .then((connection) => ({ connection, client: new Client({ connection, namespace }) }))
      .catch((error: unknown) => {
        connecting = null;
        throw error;
      });
    return connecting;
  };
  return {
    client: async () => (await connect()).client,
    async close() {
      const pending = connecting;
      connecting = null;
      if (pending) await pending.then(({ connection }) => connection.close(), () => undefined);
    },
  };
}
