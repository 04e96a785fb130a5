// SQL the runs API needs beyond the history and run repositories: the assistant a
// run is created for, the owner's own (another owner's or tenant's is not there).
import type { Queryable } from '../../../platform/db/database.js';
import type { StoredScope } from '../history/repository.js';

/** What a run takes from its assistant. */
export interface RunAssistant {
  id: string;
  model: string;
  instructions: string | null;
  grounding: StoredScope | null;
  temperature: number | null;
  max_tokens: number | null;
}

export const runAssistantRepository = {
  async get(q: Queryable, tenantId: string, owner: string, id: string): Promise<RunAssistant | undefined> {
    const [row] = await q.query<RunAssistant>(
      'SELECT id, model, instructions, grounding, temperature, max_tokens FROM assistants WHERE tenant_id = $1 AND owner = $2 AND id = $3',
      [tenantId, owner, id],
    );
    return row;
  },
};
