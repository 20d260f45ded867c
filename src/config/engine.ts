import { BackendRoutes } from '../extproc/backend-routes.js';
import type { ExchangeFactory } from '../extproc/exchange.js';
import { type ExchangeSummary, policyExchanges } from '../extproc/policy-exchange.js';
import { createEngineServices, type ElementCounters, jsonLogger } from '../extproc/policy-services.js';
import type { CompiledGateway } from './gateway.js';

export interface EngineParts {
  readonly exchanges: ExchangeFactory;
  readonly counters: ElementCounters;
}

export interface EngineOptions {
  /** One structured log line per request (default true). */
  readonly accessLog?: boolean;
}

/** The policy engine for a compiled gateway: the exchange factory the ext_proc server runs, and its counters. */
export function createEngine(gateway: CompiledGateway, options: EngineOptions = {}): EngineParts {
  const services = createEngineServices({ backends: gateway.backends });
  const routes = new BackendRoutes(gateway.config.apis, gateway.backends);
  const accessLog = options.accessLog ?? true;
  return {
    exchanges: policyExchanges({
      catalog: gateway.catalog,
      routes,
      services,
      ...(accessLog
        ? { onExchangeEnd: (summary: ExchangeSummary) => jsonLogger.info('request', { ...summary }) }
        : {}),
    }),
    counters: services.counters,
  };
}
