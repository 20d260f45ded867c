import { DiagnosticsError } from '../diagnostic.js';

/** Problems in a configuration file, each located as precisely as the YAML allows (path: the key path). */
export class ConfigError extends DiagnosticsError {
  override readonly name = 'ConfigError';
}
