import { z } from 'zod';

/**
 * The `state` section: where caches, rate-limit and quota counters and event streams live. Without `redis`
 * everything is in-process (one engine process); with it, every engine process shares one Redis.
 */
export const stateConfigSchema = z
  .object({
    redis: z
      .object({
        url: z.string().url(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type StateConfig = z.infer<typeof stateConfigSchema>;
