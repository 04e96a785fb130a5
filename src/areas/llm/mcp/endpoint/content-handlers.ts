// prompts/* and resources/* on the endpoint's per-request Server (tool-server.ts), over
// the ToolSource's optional ContentSource side. Both capabilities are always declared
// (a client asks and gets empty lists when nothing is granted), as a gateway fronting
// servers that may have them. On the all-servers route prompts are `{server}_{prompt}`
// like tools; resource URIs are the upstream's own, never renamed, so a read there goes
// to the first server (by name order of listing) whose resources list that URI, or else
// whose resource templates match it. Stateless: the listing is made again for the read,
// so any replica answers it. An unknown prompt is -32602; an unknown URI is the SDK's
// ResourceNotFoundError (-32602 with `data.uri`, as 2026-07-28 has it), on a one-server
// route too when the upstream says it does not have the URI.
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, UriTemplate, type Server } from '@modelcontextprotocol/server';
import type { ToolSource } from '../tool-source.js';
import { exposeTools } from './tool-names.js';
import { guarded, type ToolCaller } from './tool-server.js';

/** The code earlier revisions gave an unknown resource. */
const RESOURCE_NOT_FOUND_2025 = -32002;

export function addContentHandlers(server: Server, source: ToolSource, caller: ToolCaller): void {
  server.registerCapabilities({ prompts: {}, resources: {} });
  const prefixed = caller.server === undefined;
  const prompts = async () =>
    exposeTools((await guarded(async () => source.listPrompts?.(caller.principal, caller.server))) ?? [], prefixed);
  const resources = async () => (await guarded(async () => source.listResources?.(caller.principal, caller.server))) ?? [];
  const templates = async () => (await guarded(async () => source.listResourceTemplates?.(caller.principal, caller.server))) ?? [];

  server.setRequestHandler('prompts/list', async () => ({
    prompts: [...(await prompts())].map(([name, prompt]) => ({ ...prompt.definition, name })),
  }));

  server.setRequestHandler('prompts/get', async (request, ctx) => {
    const prompt = (await prompts()).get(request.params.name);
    // The same answer for a prompt that does not exist and one the caller is not granted.
    if (!prompt || !source.getPrompt) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
    const getPrompt = source.getPrompt.bind(source);
    return guarded(() => getPrompt(caller.principal, prompt, request.params.arguments ?? {}, ctx.mcpReq.signal));
  });

  server.setRequestHandler('resources/list', async () => {
    // Two servers listing one URI: the first keeps it (the one a read on this route reaches).
    const seen = new Set<string>();
    const listed = (await resources()).filter((r) => !seen.has(r.definition.uri) && seen.add(r.definition.uri));
    return { resources: listed.map((r) => r.definition) };
  });

  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: (await templates()).map((t) => t.definition),
  }));

  server.setRequestHandler('resources/read', async (request, ctx) => {
    const { uri } = request.params;
    const owner = caller.server ?? (await ownerOf(uri));
    if (!owner || !source.readResource) throw new ResourceNotFoundError(uri);
    const readResource = source.readResource.bind(source);
    try {
      return await guarded(() => readResource(caller.principal, owner, uri, ctx.mcpReq.signal));
    } catch (error) {
      // An upstream's not-found (-32602, or -32002 of earlier revisions) is answered as
      // 2026-07-28 has it, naming the URI, whatever shape the upstream gave it.
      if (error instanceof ProtocolError && (error.code === ProtocolErrorCode.InvalidParams || error.code === RESOURCE_NOT_FOUND_2025))
        throw new ResourceNotFoundError(uri);
      throw error;
    }
  });

  /** On the all-servers route: the server a URI belongs to, from the caller's listings now. */
  async function ownerOf(uri: string): Promise<string | undefined> {
    const listed = (await resources()).find((r) => r.definition.uri === uri);
    if (listed) return listed.server;
    return (await templates()).find((t) => matches(t.definition.uriTemplate, uri))?.server;
  }
}

function matches(template: string, uri: string): boolean {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false;
  }
}
