import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eventually } from '../../helpers/eventually';
import { BROKER, clearRetained, retainedUnder } from '../../helpers/mqtt-broker';
import { describeWithPeers } from '../../helpers/peers';
import { startServeProcess, stopServeProcess, type ServeProcess } from '../../helpers/serve-process';
import { makeTempDir } from '../../helpers/temp-dir';

// Two `svc serve` instances with one mqtt output on the real Mosquitto (docs/outputs.md "mqtt (and
// Home Assistant)", docs/decisions.md "Delivery promises"): each has its own availability topic and
// last will, Home Assistant's discovery lists both with availability_mode any, and the service
// topic stays online while either lives.

describeWithPeers(['mosquitto'], 'two instances on one MQTT prefix', () => {
  const prefix = `svc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const name = `ha-${randomBytes(3).toString('hex')}`;
  const sensorTopic = `homeassistant/sensor/svc_${name}/now_playing/config`;
  const imageTopic = `homeassistant/image/svc_${name}/cover/config`;
  let temp: ReturnType<typeof makeTempDir>;
  const instances: ServeProcess[] = [];

  beforeAll(async () => {
    temp = makeTempDir();
    fs.writeFileSync(
      path.join(temp.dir, '.svcrc.json'),
      JSON.stringify({ outputs: [{ name, type: 'mqtt', url: BROKER, topic: prefix, homeAssistant: true }] }),
    );
    for (const db of ['one.db', 'two.db']) instances.push(await startServeProcess(['--port', '0', '--db', path.join(temp.dir, db), '--offline'], {}, temp.dir));
  });
  afterAll(async () => {
    for (const instance of instances) if (instance.child.exitCode === null) instance.child.kill('SIGKILL');
    await Promise.all(instances.map((instance) => instance.exited));
    await clearRetained(`${prefix}/#`, [sensorTopic, imageTopic]);
    temp.cleanup();
  });

  const statuses = () => retainedUnder(`${prefix}/status/+`);
  const availabilityTopics = async () => {
    const sensor = (await retainedUnder(sensorTopic)).get(sensorTopic);
    const config = JSON.parse(sensor ?? '{}') as { availability?: { topic: string }[]; availability_mode?: string };
    return { topics: (config.availability ?? []).map((entry) => entry.topic).sort(), mode: config.availability_mode };
  };

  it('When both run, then each has its own online topic and the discovery config lists both, available when any is', async () => {
    const online = await eventually(statuses, (found) => [...found.values()].filter((value) => value === 'online').length === 2);
    expect([...online.values()]).toEqual(['online', 'online']);
    const listed = await eventually(availabilityTopics, (config) => config.topics.length === 2);
    expect(listed).toEqual({ topics: [...online.keys()].sort(), mode: 'any' });
    expect((await retainedUnder(`${prefix}/status`)).get(`${prefix}/status`)).toBe('online');
  });

  it('When one is killed with -9, then its own topic reads offline (its will) and the service topic reads online', async () => {
    const before = await statuses();
    const [victim] = instances;
    victim?.child.kill('SIGKILL');
    await victim?.exited;
    const after = await eventually(statuses, (found) => [...found.values()].filter((value) => value === 'offline').length === 1);
    expect([...after.values()].sort()).toEqual(['offline', 'online']);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    const service = await eventually(
      async () => (await retainedUnder(`${prefix}/status`)).get(`${prefix}/status`),
      (value) => value === 'online',
    );
    expect(service).toBe('online');
    // Home Assistant still lists both; the survivor keeps the entities available.
    expect((await availabilityTopics()).topics).toHaveLength(2);
  });

  it('When the last one stops, then the service topic reads offline', async () => {
    const survivor = instances[1];
    if (survivor) await stopServeProcess(survivor);
    const service = await eventually(
      async () => (await retainedUnder(`${prefix}/status`)).get(`${prefix}/status`),
      (value) => value === 'offline',
    );
    expect(service).toBe('offline');
  });
});

// Every instance stopped at once (a host's shutdown, a deploy that stops all): each saw the others
// online when it stopped, so none said the service `offline` (issue 50, finding 3). Now each one
// that leaves others behind drops its service-will connection without a DISCONNECT, so the broker
// publishes that will; an instance still serving answers it with `online`, and when none is left
// the service topic ends `offline`.
describeWithPeers(['mosquitto'], 'every instance on one MQTT prefix stopped at once', () => {
  const prefix = `svc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  let temp: ReturnType<typeof makeTempDir>;
  const instances: ServeProcess[] = [];

  beforeAll(async () => {
    temp = makeTempDir();
    fs.writeFileSync(path.join(temp.dir, '.svcrc.json'), JSON.stringify({ outputs: [{ name: 'all', type: 'mqtt', url: BROKER, topic: prefix }] }));
    for (const db of ['one.db', 'two.db', 'three.db'])
      instances.push(await startServeProcess(['--port', '0', '--db', path.join(temp.dir, db), '--offline'], {}, temp.dir));
  });
  afterAll(async () => {
    for (const instance of instances) if (instance.child.exitCode === null) instance.child.kill('SIGKILL');
    await Promise.all(instances.map((instance) => instance.exited));
    await clearRetained(`${prefix}/#`, []);
    temp.cleanup();
  });

  it('When SIGTERM reaches all three at once, then the service topic ends offline', async () => {
    await eventually(
      () => retainedUnder(`${prefix}/status/+`),
      (found) => [...found.values()].filter((value) => value === 'online').length === 3,
    );
    for (const instance of instances) instance.child.kill('SIGTERM');
    await Promise.all(instances.map((instance) => instance.exited));
    const service = await eventually(
      async () => (await retainedUnder(`${prefix}/status`)).get(`${prefix}/status`),
      (value) => value === 'offline',
    );
    expect(service).toBe('offline');
  });
});
