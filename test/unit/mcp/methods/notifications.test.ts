import { describe, expect, it } from 'vitest';
import { dispatcher, methodContext } from '../harness.js';

describe('notifications', () => {
  it('notifications/initialized marks the session initialized', async () => {
    const { ctx, session } = methodContext();
    expect(session.initialized).toBe(false);
    await dispatcher.notification(
      { kind: 'notification', method: 'notifications/initialized', params: {} },
      ctx,
    );
    expect(session.initialized).toBe(true);
  });

  it('notifications/cancelled and unknown notifications are accepted silently', async () => {
    const { ctx, logs } = methodContext();
    await dispatcher.notification(
      { kind: 'notification', method: 'notifications/cancelled', params: { requestId: 3 } },
      ctx,
    );
    await dispatcher.notification(
      { kind: 'notification', method: 'notifications/whatever', params: {} },
      ctx,
    );
    expect(logs).toEqual([]);
  });
});
