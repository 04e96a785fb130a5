// Every compute node as the router's registry takes it: GATEWAY_NODES entries and
// the built-in local engine (fixed at start, ids derived from what they are, so
// they stay the same across restarts and replicas), and the API's rows.
import { createHash } from 'node:crypto';
import type { LlmConfig } from '../../../platform/config.js';
import type { Secrets } from '../../../platform/secrets.js';
import type { NodeDefinition } from '../router/node-runtime.js';
import type { ComputeNodeRow } from './repository.js';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** `node_` + ten zeros (sorts before every generated id) + 16 characters of a hash of `seed`. */
export function stableNodeId(seed: string): string {
  const digest = createHash('sha256').update(seed).digest();
  let tail = '';
  for (let i = 0; i < 16; i++) tail += ALPHABET[digest[i]! & 31];
  return `node_0000000000${tail}`;
}

export const LOCAL_NODE_ID = stableNodeId('local');

export function staticNodeDefinitions(llm: LlmConfig, startedAt: Date): NodeDefinition[] {
  const seen = new Set<string>();
  const configured = llm.nodes.map((node, index): NodeDefinition => {
    let id = stableNodeId(`config\0${node.engine}\0${node.url}\0${node.name}`);
    if (seen.has(id)) id = stableNodeId(`config\0${node.engine}\0${node.url}\0${node.name}\0${index}`);
    seen.add(id);
    return {
      id,
      name: node.name,
      engine: node.engine,
      url: node.url,
      apiKey: node.apiKey,
      tenantIds: [],
      urlScope: 'platform',
      enabled: true,
      source: 'config',
      createdAt: startedAt,
      updatedAt: startedAt,
    };
  });
  if (!llm.localEngine) return configured;
  const local: NodeDefinition = {
    id: LOCAL_NODE_ID,
    name: 'local',
    engine: 'local',
    url: undefined,
    apiKey: undefined,
    tenantIds: [],
    urlScope: 'platform',
    enabled: true,
    source: 'config',
    createdAt: startedAt,
    updatedAt: startedAt,
  };
  return [...configured, local];
}

export function definitionFromRow(row: ComputeNodeRow, secrets: Pick<Secrets, 'decrypt'>, log: (message: string) => void): NodeDefinition {
  let apiKey: string | undefined;
  if (row.api_key_encrypted) {
    try {
      apiKey = secrets.decrypt(row.api_key_encrypted);
    } catch {
      // Encrypted under another master secret: the node answers 401s and shows unhealthy until its key is set again.
      log(`compute node ${row.id}: its API key cannot be decrypted with this server's secret; set it again`);
    }
  }
  return {
    id: row.id,
    name: row.name,
    engine: row.engine,
    url: row.url,
    apiKey,
    tenantIds: row.tenant_ids,
    urlScope: row.url_scope,
    enabled: row.enabled,
    source: 'api',
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
