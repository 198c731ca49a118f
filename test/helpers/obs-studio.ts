import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { makeTempDir } from './temp-dir';
import { until } from './eventually';
import { startXvfb } from './xvfb';

// The real OBS Studio (Debian's obs-studio, with its obs-websocket plugin) under a private Xvfb
// display, with its own HOME: the WebSocket server on a free loopback port with a password, a
// small canvas at 10 fps so that software rendering stays cheap, and a scene collection whose
// scene holds a Text source (FreeType 2) named `textInput`, as a streamer's saved setup does.
// `restart()` stops OBS (SIGTERM, SIGKILL after 15 s) and starts it again on the same port: it
// comes back with the saved collection.

export interface ObsStudio {
  url: string;
  password: string;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startObsStudio(textInput: string, password = 'obs-studio-pass'): Promise<ObsStudio> {
  const home = makeTempDir('svc-obs-');
  const port = await freePort();
  writeConfig(home.dir, port, password);
  writeSceneCollection(home.dir, textInput);
  const { display, process: xvfb } = await startXvfb('640x360x24');
  let obs: ChildProcess | undefined;
  const log: string[] = [];
  const launch = async () => {
    obs = spawn('obs', ['--minimize-to-tray', '--disable-updater', '--disable-shutdown-check', '--disable-missing-files-check'], {
      env: { ...process.env, HOME: home.dir, DISPLAY: display, XDG_CONFIG_HOME: path.join(home.dir, '.config'), LIBGL_ALWAYS_SOFTWARE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    obs.stdout?.on('data', (chunk: Buffer) => log.push(chunk.toString()));
    obs.stderr?.on('data', (chunk: Buffer) => log.push(chunk.toString()));
    await waitForPort(port, 60_000).catch((error: unknown) => {
      throw new Error(`OBS did not open its WebSocket port: ${String(error)}\n${log.join('').slice(-2000)}`);
    });
  };
  const quit = async () => {
    const child = obs;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  await launch();
  return {
    url: `ws://127.0.0.1:${port}`,
    password,
    async restart() {
      await quit();
      await launch();
    },
    async close() {
      await quit();
      xvfb.kill('SIGTERM');
      home.cleanup();
    },
  };
}

function writeConfig(home: string, port: number, password: string): void {
  const config = path.join(home, '.config', 'obs-studio');
  fs.mkdirSync(path.join(config, 'basic', 'profiles', 'Untitled'), { recursive: true });
  // obs-websocket 5.1 (OBS 29) reads its settings from global.ini; later versions from plugin_config.
  fs.writeFileSync(
    path.join(config, 'global.ini'),
    [
      '[General]',
      'EnableAutoUpdates=false',
      '[Basic]',
      'Profile=Untitled',
      'ProfileDir=Untitled',
      'SceneCollection=Untitled',
      'SceneCollectionFile=Untitled',
      '[OBSWebSocket]',
      'FirstLoad=false',
      'ServerEnabled=true',
      `ServerPort=${port}`,
      'AlertsEnabled=false',
      'AuthRequired=true',
      `ServerPassword=${password}`,
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(config, 'basic', 'profiles', 'Untitled', 'basic.ini'),
    ['[General]', 'Name=Untitled', '[Video]', 'BaseCX=320', 'BaseCY=180', 'OutputCX=320', 'OutputCY=180', 'FPSType=1', 'FPSInt=10', ''].join('\n'),
  );
}

/** OBS's scene collection file: one scene, `Scene`, showing one Text source. */
function writeSceneCollection(home: string, textInput: string): void {
  const scenes = path.join(home, '.config', 'obs-studio', 'basic', 'scenes');
  fs.mkdirSync(scenes, { recursive: true });
  const text = {
    id: 'text_ft2_source',
    versioned_id: 'text_ft2_source_v2',
    name: textInput,
    uuid: '6b7a0d4e-2f1c-4c3e-9a55-0e2b4c1d7a10',
    settings: { text: '' },
  };
  const sceneItem = {
    name: textInput,
    source_uuid: text.uuid,
    visible: true,
    locked: false,
    id: 1,
    pos: { x: 0, y: 0 },
    scale: { x: 1, y: 1 },
    rot: 0,
    align: 5,
    bounds_type: 0,
  };
  const scene = {
    id: 'scene',
    versioned_id: 'scene',
    name: 'Scene',
    uuid: '1d0f3f6e-8a2b-4d7c-b1e0-5c9a2e3f4b21',
    settings: { items: [sceneItem], id_counter: 1, custom_size: false },
  };
  const collection = {
    name: 'Untitled',
    current_scene: 'Scene',
    current_program_scene: 'Scene',
    scene_order: [{ name: 'Scene' }],
    sources: [scene, text],
    groups: [],
    transitions: [],
    current_transition: 'Fade',
    transition_duration: 300,
    modules: {},
  };
  fs.writeFileSync(path.join(scenes, 'Untitled.json'), JSON.stringify(collection));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const isOpen = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  return until(isOpen, `port ${port} is open`, timeoutMs);
}
