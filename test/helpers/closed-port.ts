// Loopback ports for servers a test starts (freePort), and a loopback URL nothing
// listens on, for node and pull URLs that must never reach anything.
import net from 'node:net';

/** A loopback port that was just free (a server bound to port 0 says which, then lets it go). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** http://127.0.0.1:<port> of a port that was just free: connections to it are refused at once. */
export async function closedLoopbackUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}
