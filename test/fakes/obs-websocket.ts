import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

// OBS Studio's WebSocket server (obs-websocket 5, RPC version 1) on loopback, built from its
// protocol document (github.com/obsproject/obs-websocket, docs/generated/protocol.md):
// - "Connecting to obs-websocket": subprotocol `obswebsocket.json`; the server sends Hello
//   (op 0: obsWebSocketVersion, rpcVersion, and `authentication: {challenge, salt}` when a
//   password is set); the client sends Identify (op 1: rpcVersion, authentication,
//   eventSubscriptions); the server answers Identified (op 2: negotiatedRpcVersion).
// - "Creating an authentication string": base64(sha256(password + salt)), then
//   base64(sha256(that + challenge)).
// - WebSocketCloseCode: 4007 NotIdentified (a message before Identify), 4009
//   AuthenticationFailed, 4010 UnsupportedRpcVersion.
// - Request (op 6: requestType, requestId, requestData) is answered by RequestResponse (op 7:
//   requestType, requestId, requestStatus {result, code, comment}, responseData). RequestStatus
//   100 Success, 204 UnknownRequestType, 300 MissingRequestField, 600 ResourceNotFound.
// - SetInputSettings: inputName, inputSettings, overlay (default true: merged into the current
//   settings). GetInputSettings: inputName; answers inputSettings and inputKind. CreateInput:
//   sceneName, inputName, inputKind, inputSettings.
// OBS keeps its sources across a restart (its scene collection); so does this fake.

export interface ObsFake {
  url: string;
  password: string;
  /** Settings of each input by name (what OBS would show). */
  inputs: Map<string, { kind: string; settings: Record<string, unknown> }>;
  /** Every text a Text source was set to, in order. */
  texts: string[];
  /** Clients that identified, and refusals of a wrong password. */
  identified: number;
  refusedPasswords: number;
  /** OBS quits (every client sees the connection close) and starts again after `downMs` on the same port. */
  restart(downMs: number): Promise<void>;
  close(): Promise<void>;
}

export async function startObsFake(password = 'obs-password-4455'): Promise<ObsFake> {
  const inputs: ObsFake['inputs'] = new Map([
    ['Now Playing', { kind: 'text_ft2_source_v2', settings: { text: '', font: { face: 'Sans', size: 48 } } }],
    ['Cover', { kind: 'image_source', settings: { file: '' } }],
  ]);
  const fake = { password, inputs, texts: [] as string[], identified: 0, refusedPasswords: 0 };
  let port = 0;
  let server: http.Server;
  let wss: WebSocketServer;

  const listen = async () => {
    server = http.createServer((_req, res) => res.writeHead(426).end());
    wss = new WebSocketServer({ server, handleProtocols: (protocols) => (protocols.has('obswebsocket.json') ? 'obswebsocket.json' : false) });
    wss.on('connection', (socket) => session(socket, fake));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  await listen();
  return {
    ...fake,
    get identified() {
      return fake.identified;
    },
    get refusedPasswords() {
      return fake.refusedPasswords;
    },
    url: `ws://127.0.0.1:${port}`,
    async restart(downMs) {
      await stop();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await listen();
    },
    close: stop,
  };
}

interface FakeState {
  password: string;
  inputs: ObsFake['inputs'];
  texts: string[];
  identified: number;
  refusedPasswords: number;
}

function session(socket: WebSocket, fake: FakeState): void {
  const challenge = randomBytes(32).toString('base64');
  const salt = randomBytes(32).toString('base64');
  let identified = false;
  socket.send(JSON.stringify({ op: 0, d: { obsWebSocketVersion: '5.1.0', rpcVersion: 1, authentication: { challenge, salt } } }));
  socket.on('message', (data) => {
    let message: { op?: number; d?: Record<string, unknown> };
    try {
      message = JSON.parse((data as Buffer).toString('utf8')) as typeof message;
    } catch {
      return socket.close(4002, 'Unable to decode message');
    }
    const d = message.d ?? {};
    if (message.op === 1) {
      if (identified) return socket.close(4008, 'Already identified');
      if (typeof d.rpcVersion !== 'number' || d.rpcVersion > 1) return socket.close(4010, 'Unsupported RPC version');
      const secret = createHash('sha256')
        .update(fake.password + salt)
        .digest('base64');
      const expected = createHash('sha256')
        .update(secret + challenge)
        .digest('base64');
      if (d.authentication !== expected) {
        fake.refusedPasswords += 1;
        return socket.close(4009, 'Authentication failed.');
      }
      identified = true;
      fake.identified += 1;
      return socket.send(JSON.stringify({ op: 2, d: { negotiatedRpcVersion: 1 } }));
    }
    if (!identified) return socket.close(4007, 'Not identified');
    if (message.op === 6) socket.send(JSON.stringify({ op: 7, d: answerRequest(d, fake) }));
  });
}

function answerRequest(request: Record<string, unknown>, fake: FakeState): Record<string, unknown> {
  const base = { requestType: request.requestType, requestId: request.requestId };
  const status = (code: number, comment?: string) => ({ result: code === 100, code, ...(comment ? { comment } : {}) });
  const data = (request.requestData ?? {}) as Record<string, unknown>;
  const name = data.inputName;
  const input = typeof name === 'string' ? fake.inputs.get(name) : undefined;
  switch (request.requestType) {
    case 'SetInputSettings': {
      if (typeof name !== 'string' || typeof data.inputSettings !== 'object')
        return { ...base, requestStatus: status(300, 'Your request is missing the `inputName` or `inputSettings` field.') };
      if (!input) return { ...base, requestStatus: status(600, `No source was found by the name of \`${name}\`.`) };
      const settings = data.inputSettings as Record<string, unknown>;
      input.settings = data.overlay === false ? settings : { ...input.settings, ...settings };
      if (typeof settings.text === 'string') fake.texts.push(settings.text);
      return { ...base, requestStatus: status(100) };
    }
    case 'GetInputSettings':
      if (!input) return { ...base, requestStatus: status(600, `No source was found by the name of \`${String(name)}\`.`) };
      return { ...base, requestStatus: status(100), responseData: { inputSettings: input.settings, inputKind: input.kind } };
    case 'CreateInput':
      if (typeof name !== 'string' || typeof data.inputKind !== 'string') return { ...base, requestStatus: status(300, 'Your request is missing a field.') };
      fake.inputs.set(name, { kind: data.inputKind, settings: (data.inputSettings as Record<string, unknown> | undefined) ?? {} });
      return { ...base, requestStatus: status(100), responseData: { inputUuid: randomBytes(16).toString('hex'), sceneItemId: fake.inputs.size } };
    default:
      return { ...base, requestStatus: status(204, 'Your request type is not valid.') };
  }
}
