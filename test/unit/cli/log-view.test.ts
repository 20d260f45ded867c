import { describe, expect, it } from 'vitest';
import { chosenLogFormat, jsonLine, logView, prettyLine } from '../../../src/cli/log-view.js';

const time = '2026-11-25T12:00:01.234Z';
/** The local clock time `up` shows for `time` (the test runs in any time zone). */
const clock = (() => {
  const date = new Date(time);
  const two = (value: number) => String(value).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
})();

describe("up's log view", () => {
  it('shows a process log line as [process] time LEVEL message key=value', () => {
    const line = JSON.stringify({
      level: 'info',
      time,
      requestId: '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b',
      method: 'GET',
      path: '/courses/api/Course?page=2',
      status: 200,
      lastError: { source: 'rate-limit', reason: 'RateLimitExceeded' },
      note: 'two words',
      message: 'request',
    });
    expect(prettyLine('engine', line)).toBe(
      `[engine] ${clock} INFO  request requestId=6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b method=GET ` +
        `path="/courses/api/Course?page=2" status=200 lastError={"source":"rate-limit","reason":"RateLimitExceeded"} ` +
        `note="two words"`,
    );
  });

  it('puts the lines of a long message and of a stack under the line they belong to', () => {
    const line = JSON.stringify({
      level: 'error',
      time,
      error: 'Error: boom\n    at run (x.ts:1:1)',
      message: 'configuration refused, nothing changed:\ngateway.yaml:3:1: unknown key "colour"',
    });
    expect(prettyLine('up', line)).toBe(
      `[up] ${clock} ERROR configuration refused, nothing changed:\n    gateway.yaml:3:1: unknown key "colour" error=\n` +
        '    Error: boom\n        at run (x.ts:1:1)',
    );
  });

  it("shows other lines (Envoy's, a companion's, a JSON line of another shape) as they are", () => {
    expect(prettyLine('envoy', '[2026-11-25 12:00:01.234][info] starting main dispatch loop')).toBe(
      '[envoy] [2026-11-25 12:00:01.234][info] starting main dispatch loop',
    );
    expect(prettyLine('courses', '{"listening":3000}')).toBe('[courses] {"listening":3000}');
    expect(prettyLine('courses', '{not json')).toBe('[courses] {not json');
  });

  it('writes the control characters of text a client chose escaped, so a terminal does not obey them', () => {
    const line = JSON.stringify({
      level: 'info',
      time: '2026-11-25T12:00:01.000Z',
      path: '/x\u001b[2J\u001b[31m',
      message: 'request \u001b]0;title\u0007',
    });
    const shown = prettyLine('engine', line);
    expect(shown).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(shown).toContain('request \\u001b]0;title\\u0007');
    expect(shown).toContain('path="/x\\u001b[2J\\u001b[31m"');
    expect(prettyLine('backend', 'GET /\u001b[2J')).toBe('[backend] GET /\\u001b[2J');
  });

  it('passes JSON lines through with the process named, and wraps any other line in the same shape', () => {
    expect(jsonLine('engine-2', `{"level":"info","time":"${time}","message":"request"}`)).toBe(
      `{"process":"engine-2","level":"info","time":"${time}","message":"request"}`,
    );
    const wrapped = JSON.parse(jsonLine('envoy', '[info] starting "x"', new Date(time)));
    expect(wrapped).toEqual({ level: 'info', time, process: 'envoy', message: '[info] starting "x"' });
  });

  it('writes one line per line shown, in the chosen format', () => {
    const written: string[] = [];
    const line = `{"level":"warn","time":"${time}","message":"redis connection lost"}`;
    logView('pretty', (text) => written.push(text))('engine', line);
    logView('json', (text) => written.push(text))('engine', line);
    expect(written).toEqual([
      `[engine] ${clock} WARN  redis connection lost\n`,
      `{"process":"engine","level":"warn","time":"${time}","message":"redis connection lost"}\n`,
    ]);
  });

  it('is pretty at a terminal and json elsewhere, unless --log-format says', () => {
    expect(chosenLogFormat(undefined, true)).toBe('pretty');
    expect(chosenLogFormat(undefined, false)).toBe('json');
    expect(chosenLogFormat('json', true)).toBe('json');
    expect(chosenLogFormat('pretty', false)).toBe('pretty');
    expect(chosenLogFormat('yaml', true)).toBeUndefined();
  });
});
