import { defineElement } from '../element.js';
import { bodyText, replaceBody, responseOf } from '../message.js';
import { PolicyError } from '../runtime.js';
import { ALL_SCOPES, EMPTY, str } from '../schema.js';

/** A JavaScript identifier path (`cb`, `ns.cb`, `$cb_1`): anything else could inject script. */
const CALLBACK = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

/** Wraps a JSON response as `callback(<json>);` when the request names a callback. */
export const jsonp = defineElement({
  name: 'jsonp',
  summary: 'Wraps the JSON response in a JavaScript callback (JSONP).',
  sections: ['outbound'],
  scopes: ALL_SCOPES,
  attributes: { 'callback-parameter-name': str({ required: true }) },
  content: EMPTY,
  body: 'read-write',
  oncePerSection: true,
  compile(node) {
    const parameter = node.getter('callback-parameter-name');
    return (run) => {
      const callback = run.context.request.url.query.get(parameter(run))?.[0];
      if (callback === undefined || callback === '') return 'next';
      if (!CALLBACK.test(callback)) {
        throw new PolicyError(
          'CallbackParameterInvalid',
          `The callback "${callback.slice(0, 40)}" is not a valid name.`,
          400,
          'Bad request',
        );
      }
      const response = responseOf(run, 'response');
      replaceBody(run, 'response', `${callback}(${bodyText(response)});`);
      response.headers.set('Content-Type', 'application/javascript; charset=utf-8');
      return 'next';
    };
  },
});
