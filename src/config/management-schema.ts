import { z } from 'zod';
import { passwordHash } from './service-schema.js';

const port = z.number().int().min(0).max(65535);

/**
 * The `management` section: a REST API to change the running gateway (APIs, operations, products, subscriptions,
 * named values, backends, policies), served by `up` behind Envoy's management listener and open only to the
 * administrators listed here. Absent: no management API (the management listener of the external and internal
 * network modes then serves only Envoy's readiness and statistics).
 */
export const managementConfigSchema = z
  .object({
    /**
     * Where the management listener binds in network mode `none` (default 127.0.0.1:3443). The external and
     * internal modes bind `network.managementPort` on the gateway's addresses instead, behind the inbound rules.
     */
    listen: z
      .object({ host: z.string().min(1).default('127.0.0.1'), port: port.default(3443) })
      .strict()
      .optional(),
    /** The loopback address `up` serves the management API on, for Envoy only (0: any free port). */
    server: z
      .object({ host: z.string().min(1).default('127.0.0.1'), port: port.default(0) })
      .strict()
      .default({ host: '127.0.0.1', port: 0 }),
    /** Who may call it: HTTP Basic with this name and the password whose hash `portcullis hash-password` printed. */
    administrators: z
      .array(
        z
          .object({
            name: z.string().regex(/^[A-Za-z0-9._@-]+$/, {
              message: 'must be letters, digits, ".", "_", "@" or "-" (it is the Basic user name)',
            }),
            passwordHash,
          })
          .strict(),
      )
      .min(1, { message: 'needs at least one administrator' }),
  })
  .strict();

export type ManagementConfig = z.infer<typeof managementConfigSchema>;
