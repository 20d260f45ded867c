import type { CliCommand } from '../command.js';
import { command as backup } from './backup.js';
import { command as engine } from './engine.js';
import { command as envoyConfig } from './envoy-config.js';
import { command as hashPassword } from './hash-password.js';
import { command as importApi } from './import.js';
import { command as policyReference } from './policy-reference.js';
import { command as service } from './service.js';
import { command as up } from './up.js';
import { command as validate } from './validate.js';

/** Every `portcullis` sub-command, in the order `--help` lists them. */
export const commands: readonly CliCommand[] = [
  up,
  validate,
  policyReference,
  envoyConfig,
  importApi,
  hashPassword,
  backup,
  engine,
  service,
];
