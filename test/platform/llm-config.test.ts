// The llm part of the configuration: compute nodes from GATEWAY_NODES and the
// outbound-address deny lists, parsed once at boot with errors naming the variable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, DEFAULT_NODE_DENY_CIDRS } from '../../src/platform/config.js';

describe('llm configuration', () => {
  it('denies link-local and metadata addresses for every node, and loopback and private ranges for tenant-given URLs', () => {
    const { llm } = loadConfig({});
    assert.deepEqual(llm.nodeDenyCidrs, DEFAULT_NODE_DENY_CIDRS);
    for (const cidr of ['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '::1/128', 'fc00::/7'])
      assert.ok(llm.tenantNodeDenyCidrs.includes(cidr), cidr);
    assert.deepEqual(loadConfig({ GATEWAY_TENANT_NODE_DENY_CIDRS: 'none' }).llm.tenantNodeDenyCidrs, []);
    assert.deepEqual(loadConfig({ GATEWAY_NODE_DENY_CIDRS: '169.254.0.0/16, 10.0.0.0/8' }).llm.nodeDenyCidrs, [
      '169.254.0.0/16',
      '10.0.0.0/8',
    ]);
  });

  it('reads GATEWAY_NODES as a JSON array of {engine, url, name?, apiKey?}', () => {
    const { llm } = loadConfig({
      GATEWAY_NODES: JSON.stringify([
        { engine: 'ollama', url: 'http://127.0.0.1:11434' },
        { engine: 'openai', url: 'https://vllm.internal/v1', name: 'vllm', apiKey: 'sk-x' },
      ]),
    });
    assert.deepEqual(llm.nodes, [
      { engine: 'ollama', url: 'http://127.0.0.1:11434', name: 'ollama-1', apiKey: undefined },
      { engine: 'openai', url: 'https://vllm.internal/v1', name: 'vllm', apiKey: 'sk-x' },
    ]);
  });

  it('reads GATEWAY_SHUTDOWN_GRACE_SECONDS, how long model calls may finish at shutdown: 8 s unless set, 0 to 3600', () => {
    assert.equal(loadConfig({}).http.shutdownGraceMs, 8000);
    assert.equal(loadConfig({ GATEWAY_SHUTDOWN_GRACE_SECONDS: '0' }).http.shutdownGraceMs, 0);
    assert.equal(loadConfig({ GATEWAY_SHUTDOWN_GRACE_SECONDS: '3600' }).http.shutdownGraceMs, 3_600_000);
    for (const [value, message] of [
      ['3601', /between 0 and 3600/],
      ['-1', /whole number/],
      ['2.5', /whole number/],
      ['soon', /whole number/],
    ] as const) {
      assert.throws(
        () => loadConfig({ GATEWAY_SHUTDOWN_GRACE_SECONDS: value }),
        (error: unknown) =>
          error instanceof ConfigError && error.variable === 'GATEWAY_SHUTDOWN_GRACE_SECONDS' && message.test(error.message),
        value,
      );
    }
  });

  it('reads GATEWAY_JOB_LEASE_SECONDS, the lease on background work (ingestion, runs): 30 s unless set, 3 to 3600', () => {
    assert.equal(loadConfig({}).jobLeaseSeconds, 30);
    assert.equal(loadConfig({ GATEWAY_JOB_LEASE_SECONDS: '3' }).jobLeaseSeconds, 3);
    for (const [value, message] of [
      ['2', /between 3 and 3600/],
      ['3601', /between 3 and 3600/],
      ['1.5', /whole number/],
    ] as const) {
      assert.throws(
        () => loadConfig({ GATEWAY_JOB_LEASE_SECONDS: value }),
        (error: unknown) => error instanceof ConfigError && error.variable === 'GATEWAY_JOB_LEASE_SECONDS' && message.test(error.message),
        value,
      );
    }
  });

  it('reads GATEWAY_STREAM_EARLY_HEAD_MS, how long a chat stream waits for its engine before the head goes out: 3000 unless set, 0 (off) to 600000', () => {
    assert.equal(loadConfig({}).llm.streamEarlyHeadMs, 3000);
    assert.equal(loadConfig({ GATEWAY_STREAM_EARLY_HEAD_MS: '0' }).llm.streamEarlyHeadMs, 0);
    assert.equal(loadConfig({ GATEWAY_STREAM_EARLY_HEAD_MS: '600000' }).llm.streamEarlyHeadMs, 600_000);
    for (const [value, message] of [
      ['600001', /between 0 and 600000/],
      ['-1', /whole number/],
      ['1.5', /whole number/],
      ['3s', /whole number/],
    ] as const) {
      assert.throws(
        () => loadConfig({ GATEWAY_STREAM_EARLY_HEAD_MS: value }),
        (error: unknown) =>
          error instanceof ConfigError && error.variable === 'GATEWAY_STREAM_EARLY_HEAD_MS' && message.test(error.message),
        value,
      );
    }
  });

  it('refuses bad values with a message naming the variable', () => {
    const cases: [Record<string, string>, string, RegExp][] = [
      [{ GATEWAY_NODES: '{' }, 'GATEWAY_NODES', /JSON array/],
      [{ GATEWAY_NODES: '[{"engine":"vllm","url":"http://x"}]' }, 'GATEWAY_NODES', /engine/],
      [{ GATEWAY_NODES: '[{"engine":"openai","url":"ftp://x"}]' }, 'GATEWAY_NODES', /http\(s\)/],
      [{ GATEWAY_NODE_DENY_CIDRS: '10.0.0.0' }, 'GATEWAY_NODE_DENY_CIDRS', /CIDR/],
      [{ GATEWAY_TENANT_NODE_DENY_CIDRS: '10.0.0.0/33' }, 'GATEWAY_TENANT_NODE_DENY_CIDRS', /CIDR/],
      [{ GATEWAY_LOCAL_THREADS: '0' }, 'GATEWAY_LOCAL_THREADS', /between/],
      [{ GATEWAY_LOCAL_ENGINE: 'maybe' }, 'GATEWAY_LOCAL_ENGINE', /one of/],
    ];
    for (const [env, variable, message] of cases) {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && error.variable === variable && message.test(error.message),
        JSON.stringify(env),
      );
    }
  });
});
