// The document and chunk records and the request shapes of the document routes;
// the TypeScript types are derived from them, so the two can never disagree.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Page } from '../../paging.js';
import { Text, Timestamp } from '../../schemas.js';
import { MEDIA_TYPES } from './media-types.js';

/** What a document's metadata may weigh, as JSON. */
export const METADATA_MAX_BYTES = 16 * 1024;
/** How deep its objects and arrays may nest: deep enough for any real metadata, shallow enough to walk safely. */
export const METADATA_MAX_DEPTH = 32;
/** A document's name: the uploaded file's, without any path. */
export const NAME_MAX_LENGTH = 255;

const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: `A JSON object of at most ${METADATA_MAX_BYTES / 1024} KB, kept with the document.`,
});

export const DocumentStatus = Type.Union([
  Type.Literal('queued'),
  Type.Literal('processing'),
  Type.Literal('ready'),
  Type.Literal('failed'),
]);

/**
 * Where processing is: extracting (and chunking) the file, waiting for the built-in
 * embedder's one-off preparation (converting its word vectors, once per data dir),
 * embedding the chunks, writing them to the index.
 */
export const DocumentStage = Type.Union([
  Type.Literal('extracting'),
  Type.Literal('preparing_embedder'),
  Type.Literal('embedding'),
  Type.Literal('indexing'),
]);
export type DocumentStage = Static<typeof DocumentStage>;

export const Document = Type.Object({
  id: Type.String(),
  collectionId: Type.String(),
  workspaceId: Type.String(),
  name: Type.String(),
  mediaType: Type.Union([
    Type.Literal(MEDIA_TYPES.text),
    Type.Literal(MEDIA_TYPES.markdown),
    Type.Literal(MEDIA_TYPES.html),
    Type.Literal(MEDIA_TYPES.pdf),
    Type.Literal(MEDIA_TYPES.docx),
    Type.Literal(MEDIA_TYPES.csv),
    Type.Literal(MEDIA_TYPES.json),
  ]),
  bytes: Type.Integer(),
  sha256: Type.String(),
  status: DocumentStatus,
  /** Where processing is (DocumentStage); null before it starts and once it is done. */
  stage: Type.Union([DocumentStage, Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  chunkCount: Type.Integer(),
  metadata: Metadata,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Document = Static<typeof Document>;

export const Chunk = Type.Object({
  id: Type.String(),
  chunkIndex: Type.Integer(),
  content: Type.String(),
  title: Type.String(),
  headingPath: Type.Array(Type.String()),
  page: Type.Union([Type.Integer(), Type.Null()]),
  tokenCount: Type.Integer(),
});
export type Chunk = Static<typeof Chunk>;

/** `?limit=1..200` (50 by default), `after` (a document id; for chunks a chunk index) and `q` (paging.ts). */
export const DocumentPage = Page(Document);
export const ChunkPage = Page(Chunk);
export const DocumentList = Type.Object({ data: Type.Array(Document) });

export const CollectionDocumentsParams = Type.Object({ collectionId: Type.String() });
export const WorkspaceDocumentsParams = Type.Object({ workspaceId: Type.String() });
export const DocumentParams = Type.Object({ documentId: Type.String() });

/** A document sent as JSON text rather than as a file. */
export const NewTextDocument = Type.Object({
  name: Text(NAME_MAX_LENGTH),
  // Anything but NUL (the text rules refuse it): documents hold form feeds, tabs, odd characters.
  text: Type.String({ minLength: 1, text: 'verbatim' }),
  metadata: Type.Optional(Metadata),
});
export type NewTextDocument = Static<typeof NewTextDocument>;

/** The same upload as files (`multipart/form-data`; read by upload.ts): for the API document. */
export const UploadForm = Type.Object({
  file: Type.Array(Type.String({ format: 'binary', contentMediaType: 'application/octet-stream' }), {
    minItems: 1,
    description: 'One part named `file` per file (PDF, DOCX, HTML, Markdown, text, JSON, CSV…); its file name becomes the document name.',
  }),
  metadata: Type.Optional(
    Type.String({
      contentMediaType: 'application/json',
      description: `Optional: a JSON object of at most ${METADATA_MAX_BYTES / 1024} KB, kept with every file of the upload.`,
    }),
  ),
});
