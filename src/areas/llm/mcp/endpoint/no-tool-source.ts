// The tool source before the registry provides one: no servers, so no tools, and
// nothing to call. Listing answers an empty list rather than an error, as for a
// caller granted nothing.
import type { ToolSource } from '../tool-source.js';

export const noToolSource: ToolSource = {
  list: async () => [],
  call: async () => {
    throw new Error('No MCP servers are registered.');
  },
};
