// Documents: uploads into a collection (or a workspace's default one), reading them
// and their chunks, deleting them. Any credential of the tenant reads; a tenant admin
// or an API key uploads and deletes.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { principalOf } from '../../guard.js';
import { ListQuery } from '../../paging.js';
import { problems } from '../../schemas.js';
import {
  CollectionDocumentsParams,
  Document,
  DocumentList,
  DocumentPage,
  ChunkPage,
  DocumentParams,
  NewTextDocument,
  UploadForm,
  WorkspaceDocumentsParams,
} from './schemas.js';
import {
  deleteDocument,
  getDocument,
  listChunks,
  listDocuments,
  storeDocuments,
  storeText,
  uploadTarget,
  type DocumentDeps,
  type UploadTarget,
} from './service.js';
import { readMultipartUpload } from './upload.js';

// JSON escapes (\n, \") make a text's body longer than the text; the text itself is held to uploadMaxBytes.
const JSON_OVERHEAD = 2;
const JSON_BODY_CEILING = 512 * 1024 ** 2;

export const documentRoutes: FastifyPluginAsyncTypebox<{ deps: DocumentDeps }> = async (app, { deps }) => {
  const limits = { maxBytes: deps.config.documents.uploadMaxBytes, maxFiles: deps.config.documents.uploadMaxFiles };
  // Here only: no other route takes multipart bodies.
  await app.register(multipart, { limits: { fileSize: limits.maxBytes, files: limits.maxFiles } });

  const uploadOptions = {
    config: { access: 'tenantEditor' as const, multipartForm: UploadForm },
    bodyLimit: Math.min(limits.maxBytes * JSON_OVERHEAD + 64 * 1024, JSON_BODY_CEILING),
    // The body schema is the JSON form's; a multipart body is read and checked by upload.ts instead.
    attachValidation: true,
    // A refused upload is not read to its end (a 1 GB file is cut off at the limit): the connection goes with it.
    onSend: async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      if (!request.raw.complete) reply.header('connection', 'close');
      return payload;
    },
  };
  const uploadResponses = {
    200: Type.Union([Document, DocumentList]),
    202: Type.Union([Document, DocumentList]),
    ...problems(400, 401, 403, 404, 413, 415),
  };

  async function upload(request: FastifyRequest, reply: FastifyReply, target: UploadTarget) {
    const invalid = request.validationError;
    if (invalid && !(request.isMultipart() && invalid.validationContext === 'body')) throw invalid;
    const principal = principalOf(request);
    // Who may upload where is settled before the body is read.
    const collection = await uploadTarget(deps, principal, target);
    if (request.isMultipart()) {
      const { files, metadata } = await readMultipartUpload(request, limits);
      const stored = await storeDocuments(deps, principal, collection, files, metadata);
      return reply.code(stored.created ? 202 : 200).send({ data: stored.documents });
    }
    const stored = await storeText(deps, principal, collection, request.body as NewTextDocument);
    return reply.code(stored.created ? 202 : 200).send(stored.documents[0]);
  }

  app.post(
    '/collections/:collectionId/documents',
    { ...uploadOptions, schema: { params: CollectionDocumentsParams, body: NewTextDocument, response: uploadResponses } },
    async (request, reply) => upload(request, reply, { collectionId: request.params.collectionId }),
  );

  app.post(
    '/workspaces/:workspaceId/documents',
    { ...uploadOptions, schema: { params: WorkspaceDocumentsParams, body: NewTextDocument, response: uploadResponses } },
    async (request, reply) => upload(request, reply, { workspaceId: request.params.workspaceId }),
  );

  app.get(
    '/collections/:collectionId/documents',
    {
      config: { access: 'tenant' },
      schema: { params: CollectionDocumentsParams, querystring: ListQuery, response: { 200: DocumentPage, ...problems(400, 401, 404) } },
    },
    async (request) => listDocuments(deps, principalOf(request), request.params.collectionId, request.query),
  );

  app.get(
    '/documents/:documentId',
    { config: { access: 'tenant' }, schema: { params: DocumentParams, response: { 200: Document, ...problems(401, 404) } } },
    async (request) => getDocument(deps, principalOf(request), request.params.documentId),
  );

  app.delete(
    '/documents/:documentId',
    { config: { access: 'tenantEditor' }, schema: { params: DocumentParams, response: { 204: Type.Null(), ...problems(401, 403, 404) } } },
    async (request, reply) => {
      await deleteDocument(deps, principalOf(request), request.params.documentId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/documents/:documentId/chunks',
    {
      config: { access: 'tenant' },
      schema: { params: DocumentParams, querystring: ListQuery, response: { 200: ChunkPage, ...problems(400, 401, 404) } },
    },
    async (request) => listChunks(deps, principalOf(request), request.params.documentId, request.query),
  );
};
