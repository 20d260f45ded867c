import { extAuthzDisabled, extAuthzFilter } from '../../src/envoy/ext-authz.js';
import { authorizationServiceName } from '../../src/extauthz/proto.js';

/** The two ways Envoy can call the engine: the tests of header-only policies run over both. */
export type EngineTransport = 'ext_proc' | 'ext_authz';
export const engineTransports: readonly EngineTransport[] = ['ext_proc', 'ext_authz'];

const extProcFilterName = 'envoy.filters.http.ext_proc';

/**
 * The generated bootstrap with the ext_authz filter in place of ext_proc (same position, same engine cluster, the
 * same routes skipping it), the engine's health check asking for the Authorization service: what an operator whose
 * Envoy may not run ext_proc configures.
 */
export function withExtAuthz(generated: Record<string, unknown>, timeoutMs = 2000): Record<string, unknown> {
  return replace(generated, timeoutMs) as Record<string, unknown>;
}

function replace(value: unknown, timeoutMs: number): unknown {
  if (Array.isArray(value)) return value.map((item) => replace(item, timeoutMs));
  if (value === 'envoy.service.ext_proc.v3.ExternalProcessor') return authorizationServiceName;
  if (value === null || typeof value !== 'object') return value;
  const object = value as Record<string, unknown>;
  if (object.name === extProcFilterName && 'typed_config' in object) return extAuthzFilter({ timeoutMs });
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(object)) {
    if (key === extProcFilterName) out['envoy.filters.http.ext_authz'] = extAuthzDisabled;
    else out[key] = replace(item, timeoutMs);
  }
  return out;
}
