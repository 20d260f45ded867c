import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/config/plan.js';

const example = fileURLToPath(new URL('../../examples/courses', import.meta.url));

/** The example's fixed ports: gateway, Envoy admin, management, the sample backend. */
const examplePorts = ['8080', '9901', '3443', '8081'] as const;

export interface ExampleCopy {
  readonly configFile: string;
  /** The free port each of the example's fixed ports was moved to. */
  readonly ports: ReadonlyMap<(typeof examplePorts)[number], number>;
  /** A text with the example's ports moved as the copy's were (a command from the docs). */
  moved(text: string): string;
}

/**
 * A copy of examples/courses in `directory` (as a user copies it to start their own gateway), with its fixed ports
 * moved to free ones so a test runs beside others. `copy`: when the caller copied the folder itself already.
 */
export async function copyExample(directory: string, copy = true): Promise<ExampleCopy> {
  if (copy) cpSync(example, directory, { recursive: true });
  const ports = new Map<(typeof examplePorts)[number], number>();
  for (const port of examplePorts) ports.set(port, await freePort());
  const moved = (text: string) =>
    text.replace(/\b(8080|9901|3443|8081)\b/g, (port) =>
      String(ports.get(port as (typeof examplePorts)[number])),
    );
  const configFile = path.join(directory, 'gateway.yaml');
  writeFileSync(configFile, moved(readFileSync(configFile, 'utf8')));
  return { configFile, ports, moved };
}
