// SQL for assistants. Every statement filters by tenant and owner (llm/history/owner.ts),
// both from the credential: another owner's assistant is not there.
import type { Queryable } from '../../../platform/db/database.js';
import type { Page, StoredScope } from '../history/repository.js';

export interface AssistantRow {
  id: string;
  tenant_id: string;
  owner: string;
  name: string | null;
  description: string | null;
  instructions: string | null;
  /** As the caller gave it (`auto` included): resolved when a run starts. */
  model: string;
  grounding: StoredScope | null;
  temperature: number | null;
  max_tokens: number | null;
  metadata: Record<string, string>;
  created_at: Date;
}

export type AssistantFields = Pick<
  AssistantRow,
  'name' | 'description' | 'instructions' | 'model' | 'grounding' | 'temperature' | 'max_tokens' | 'metadata'
>;

const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

export const assistantRepository = {
  async insert(q: Queryable, row: Pick<AssistantRow, 'id' | 'tenant_id' | 'owner'> & AssistantFields): Promise<AssistantRow> {
    const [created] = await q.query<AssistantRow>(
      `INSERT INTO assistants (id, tenant_id, owner, name, description, instructions, model, grounding, temperature, max_tokens, metadata)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11::jsonb) RETURNING *`,
      [
        row.id,
        row.tenant_id,
        row.owner,
        row.name,
        row.description,
        row.instructions,
        row.model,
        json(row.grounding),
        row.temperature,
        row.max_tokens,
        JSON.stringify(row.metadata),
      ],
    );
    return created!;
  },

  /** The owner's assistant, or undefined (another owner's or tenant's is not there). What a run reads its settings from. */
  async get(q: Queryable, tenantId: string, owner: string, id: string): Promise<AssistantRow | undefined> {
    const [row] = await q.query<AssistantRow>('SELECT * FROM assistants WHERE tenant_id = $1 AND owner = $2 AND id = $3', [
      tenantId,
      owner,
      id,
    ]);
    return row;
  },

  /** A page of the owner's assistants by id (ids sort by creation); after/before are assistant ids. */
  async list(q: Queryable, tenantId: string, owner: string, page: Page): Promise<AssistantRow[]> {
    const op = page.order === 'asc' ? '>' : '<';
    const back = page.order === 'asc' ? '<' : '>';
    return q.query<AssistantRow>(
      `SELECT * FROM assistants
        WHERE tenant_id = $1 AND owner = $2
          AND ($4::text IS NULL OR id ${op} $4) AND ($5::text IS NULL OR id ${back} $5)
        ORDER BY id ${page.order === 'asc' ? 'ASC' : 'DESC'} LIMIT $3`,
      [tenantId, owner, page.limit, page.after ?? null, page.before ?? null],
    );
  },

  /** Writes every field (the service merged the request over the current row). */
  async update(q: Queryable, tenantId: string, owner: string, id: string, fields: AssistantFields): Promise<AssistantRow | undefined> {
    const [row] = await q.query<AssistantRow>(
      `UPDATE assistants SET name = $4, description = $5, instructions = $6, model = $7, grounding = $8::jsonb,
              temperature = $9, max_tokens = $10, metadata = $11::jsonb
        WHERE tenant_id = $1 AND owner = $2 AND id = $3 RETURNING *`,
      [
        tenantId,
        owner,
        id,
        fields.name,
        fields.description,
        fields.instructions,
        fields.model,
        json(fields.grounding),
        fields.temperature,
        fields.max_tokens,
        JSON.stringify(fields.metadata),
      ],
    );
    return row;
  },

  async delete(q: Queryable, tenantId: string, owner: string, id: string): Promise<boolean> {
    const rows = await q.query('DELETE FROM assistants WHERE tenant_id = $1 AND owner = $2 AND id = $3 RETURNING id', [
      tenantId,
      owner,
      id,
    ]);
    return rows.length > 0;
  },
};
