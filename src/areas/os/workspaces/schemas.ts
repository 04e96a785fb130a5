// The workspace record and the request shapes of /api/os/workspaces; the
// TypeScript types are derived from them, so the two can never disagree.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Text, Timestamp } from '../../schemas.js';

export const Workspace = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Workspace = Static<typeof Workspace>;

export const WorkspaceParams = Type.Object({ workspaceId: Type.String() });

export const NewWorkspace = Type.Object({
  name: Text(200),
  description: Type.Optional(Type.String({ maxLength: 2000, text: 'multiline' })),
});
export type NewWorkspace = Static<typeof NewWorkspace>;

export const WorkspacePatch = Type.Object({
  name: Type.Optional(Text(200)),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 2000, text: 'multiline' }), Type.Null()])),
});
export type WorkspacePatch = Static<typeof WorkspacePatch>;
