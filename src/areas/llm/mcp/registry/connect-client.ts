// Opening an SDK client on a transport, for the HTTP upstreams (upstream.ts) and the
// operator's stdio servers (stdio-servers.ts) alike: a failed handshake leaves nothing
// open, and the caller hears when the other side ends the connection (a server that
// restarted, a child that exited), so that the next use reconnects.
import type { Client } from '@modelcontextprotocol/client';

type Transport = Parameters<Client['connect']>[0];

export async function connectClient(client: Client, transport: Transport, timeoutMs: number, onClosed: () => void): Promise<Client> {
  try {
    await client.connect(transport, { timeout: timeoutMs });
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  const previousOnClose = client.onclose;
  client.onclose = () => {
    previousOnClose?.();
    onClosed();
  };
  return client;
}
