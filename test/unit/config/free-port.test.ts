import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/config/plan.js';

/** The first port of Linux's ephemeral range, where binds to port 0 land. */
const [ephemeralFirst] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
  .trim()
  .split(/\s+/)
  .map(Number);

describe('freePort', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  it('hands out distinct ports below the ephemeral range, where no bind to port 0 can take them meanwhile', async () => {
    const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) expect(port).toBeLessThan(ephemeralFirst!);
  });

  it('skips a port something listens on', async () => {
    const taken = await freePort();
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(taken + 1, '127.0.0.1', resolve));
    const next = await freePort();
    expect(next).not.toBe(taken + 1);
  });
});
