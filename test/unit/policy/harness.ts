import { PolicyLoadError } from '../../../src/policy/diagnostics.js';
import { compileAt, policies } from '../../doubles/policy-services.js';

/** `path: message` of every load-time problem of an inbound (or given) section. */
export function diagnosticsOf(
  statements: string,
  section: 'inbound' | 'backend' | 'outbound' | 'on-error' = 'inbound',
  scope: Parameters<typeof compileAt>[1] = 'operation',
): string[] {
  try {
    compileAt(policies({ [section]: statements }), scope);
    return [];
  } catch (err) {
    if (err instanceof PolicyLoadError) return err.diagnostics.map((d) => `${d.path}: ${d.message}`);
    throw err;
  }
}
