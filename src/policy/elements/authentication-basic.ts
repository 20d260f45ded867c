import { defineElement } from '../element.js';
import { EMPTY, GPAO, str } from '../schema.js';

/** Sends HTTP Basic credentials to the backend (replacing any Authorization header of the caller). */
export const authenticationBasic = defineElement({
  name: 'authentication-basic',
  summary: 'Authenticates to the backend with HTTP Basic credentials.',
  sections: ['inbound'],
  scopes: GPAO,
  attributes: { username: str({ required: true }), password: str({ required: true }) },
  content: EMPTY,
  compile(node) {
    const username = node.getter('username');
    const password = node.getter('password');
    return (run) => {
      const user = username(run);
      if (user.includes(':')) throw new TypeError('authentication-basic/@username must not contain ":"');
      const credentials = Buffer.from(`${user}:${password(run)}`, 'utf8').toString('base64');
      run.context.request.headers.set('Authorization', `Basic ${credentials}`);
      return 'next';
    };
  },
});
