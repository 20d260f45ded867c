export { createManagementApp, type ManagementAppOptions } from './app.js';
export { type ManagementServer, serveManagement } from './server.js';
export type { ChangeOutcome, ManagedConfiguration, RunningConfiguration } from './store.js';
