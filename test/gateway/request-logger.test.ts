// The request's logger is made on first use: a request that logs nothing costs no
// pino child; one that logs writes the same lines (correlation id bound, secrets
// redacted) through one child made once.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { requestLogger } from '../../src/gateway/request-logger.js';
import { loggerOptions } from '../../src/platform/logging.js';

function parentLogger(level = 'info') {
  const lines: string[] = [];
  const parent = pino(loggerOptions(level), { write: (line: string) => void lines.push(line) });
  let children = 0;
  const original = parent.child;
  parent.child = function (this: typeof parent, ...args: Parameters<typeof original>) {
    children++;
    return original.apply(this, args);
  } as typeof original;
  return { parent: parent as unknown as FastifyBaseLogger, lines, children: () => children };
}

const make = (parent: FastifyBaseLogger) => requestLogger.call({} as FastifyInstance, parent, { correlationId: 'corr-7' }, {}, {} as never);

describe('request logger', () => {
  it('makes no child until a line is logged', () => {
    const { parent, children } = parentLogger();
    const log = make(parent);
    assert.equal(log.level, 'info');
    assert.equal(children(), 0);
  });

  it('logs through one child with the correlation id bound and secrets redacted', () => {
    const { parent, lines, children } = parentLogger();
    const log = make(parent);
    log.warn({ apiKey: 'rdk_secret_value', model: 'm', err: { token: 'rdk_secret_value' } }, 'engine failed');
    log.error('second %s', 'line');
    log.debug('below the level');
    assert.equal(children(), 1);
    assert.equal(lines.length, 2);
    const [first, second] = lines.map((line) => JSON.parse(line));
    assert.equal(first.correlationId, 'corr-7');
    assert.equal(first.msg, 'engine failed');
    assert.equal(first.apiKey, '[redacted]');
    assert.equal(first.err.token, '[redacted]');
    assert.equal(first.level, 40);
    assert.equal(second.msg, 'second line');
    assert.equal(second.correlationId, 'corr-7');
    assert.ok(!lines.join('').includes('rdk_secret_value'));
  });

  it('logs each of the six levels at its own level', () => {
    const { parent, lines } = parentLogger('trace');
    const log = make(parent);
    const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
    for (const level of levels) log[level]({ level_name: level }, 'at %s', level);
    const parsed = lines.map((line) => JSON.parse(line));
    assert.deepEqual(
      parsed.map((l) => [l.level, l.level_name, l.msg, l.correlationId]),
      levels.map((level, i) => [60 - 10 * i, level, `at ${level}`, 'corr-7']),
    );
  });

  it('passes a level change and child loggers through to the real child', () => {
    const { parent, lines } = parentLogger();
    const log = make(parent);
    log.level = 'debug';
    log.debug('now shown');
    log.child({ area: 'llm' }).info('from a grandchild');
    const parsed = lines.map((line) => JSON.parse(line));
    assert.deepEqual(
      parsed.map((l) => l.msg),
      ['now shown', 'from a grandchild'],
    );
    assert.equal(parsed[1].area, 'llm');
    assert.equal(parsed[1].correlationId, 'corr-7');
  });
});
