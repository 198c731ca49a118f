import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A local HTTP server standing in for a host of images (a DJ app's cover URL, a provider's CDN).
// It records every request it sees, so a test can prove that a refused URL was never requested.

export type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void;

export interface ImageHost {
  /** `http://<address>:<port>` */
  url: string;
  port: number;
  /** Paths requested so far, in order. */
  requests: string[];
  route(path: string, handler: Handler): void;
  close(): Promise<void>;
}

export async function startImageHost(address = '127.0.0.1'): Promise<ImageHost> {
  const routes = new Map<string, Handler>();
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    const path = request.url ?? '/';
    requests.push(path);
    const handler = routes.get(path);
    if (handler) handler(request, response);
    else response.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    route: (path, handler) => routes.set(path, handler),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const serveBytes =
  (bytes: Buffer, type = 'application/octet-stream'): Handler =>
  (_request, response) => {
    response.writeHead(200, { 'Content-Type': type, 'Content-Length': bytes.length }).end(bytes);
  };

export const redirectTo =
  (location: string, status = 302): Handler =>
  (_request, response) => {
    response.writeHead(status, { Location: location }).end();
  };

export const afterDelay =
  (ms: number, handler: Handler): Handler =>
  (request, response) => {
    const timer = setTimeout(() => handler(request, response), ms);
    response.on('close', () => clearTimeout(timer));
  };
