import { compileGateway } from '../../../src/config/gateway.js';
import { loadConfigText } from '../../../src/config/load.js';

/**
 * What the configuration tests load: a gateway file held in memory as `<directory>/gateway.yaml`, compiled, with
 * `files` (policies, schemas, SDL) beside it — nothing read from disk.
 */
export function inMemoryGateway(directory: string) {
  const file = `${directory}/gateway.yaml`;
  return async (text: string, files: Record<string, string> = {}) =>
    compileGateway(
      await loadConfigText(
        text,
        file,
        new Map([
          [file, text],
          ...Object.entries(files).map(([name, body]) => [`${directory}/${name}`, body] as const),
        ]),
      ),
    );
}
