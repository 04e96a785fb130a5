// /api/llm/v1/threads and /threads/{thread_id}/messages: OpenAI's Assistants v2 threads
// and messages (the official SDK's beta.threads client works unchanged), plus
// `GET /threads`, the caller's threads. Runs (`/threads/runs`, `/threads/{id}/runs…`)
// are thread-runs/'s. Creates honour `Idempotency-Key`; every route is the owner's.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { ListOf, ListQuery } from '../history/pages.js';
import { idempotentRecord } from '../idempotency/idempotency.js';
import { appendMessage, deleteMessage, findMessage, getMessage, listMessages, updateMessage } from './messages.js';
import { MessageObject, ThreadObject } from './objects.js';
import {
  MessageDeleted,
  MessageListQuery,
  MessageParams,
  MessagePatch,
  NewMessage,
  NewThread,
  ThreadDeleted,
  ThreadParams,
  ThreadPatch,
} from './schemas.js';
import { createThread, deleteThread, findThread, getThread, listThreads, updateThread, type ThreadDeps } from './service.js';

const owner = { access: 'owner' as const };

export const threadRoutes: FastifyPluginAsyncTypebox<{ deps: ThreadDeps }> = async (app, { deps }) => {
  app.post(
    '/threads',
    { config: owner, schema: { body: NewThread, response: { 200: ThreadObject, ...problems(400, 401, 404, 409) } } },
    async (request) => {
      const principal = principalOf(request);
      return idempotentRecord(
        deps,
        principal,
        request,
        () => createThread(deps, principal, request.body),
        (id) => findThread(deps, principal, id),
      );
    },
  );

  app.get(
    '/threads',
    { config: owner, schema: { querystring: ListQuery, response: { 200: ListOf(ThreadObject), ...problems(400, 401) } } },
    async (request) => listThreads(deps, principalOf(request), request.query),
  );

  app.get(
    '/threads/:threadId',
    { config: owner, schema: { params: ThreadParams, response: { 200: ThreadObject, ...problems(401, 404) } } },
    async (request) => getThread(deps, principalOf(request), request.params.threadId),
  );

  app.post(
    '/threads/:threadId',
    { config: owner, schema: { params: ThreadParams, body: ThreadPatch, response: { 200: ThreadObject, ...problems(400, 401, 404) } } },
    async (request) => updateThread(deps, principalOf(request), request.params.threadId, request.body),
  );

  app.delete(
    '/threads/:threadId',
    { config: owner, schema: { params: ThreadParams, response: { 200: ThreadDeleted, ...problems(401, 404) } } },
    async (request) => deleteThread(deps, principalOf(request), request.params.threadId),
  );

  app.post(
    '/threads/:threadId/messages',
    {
      config: owner,
      schema: { params: ThreadParams, body: NewMessage, response: { 200: MessageObject, ...problems(400, 401, 404, 409) } },
    },
    async (request) => {
      const principal = principalOf(request);
      const { threadId } = request.params;
      return idempotentRecord(
        deps,
        principal,
        request,
        () => appendMessage(deps, principal, threadId, request.body),
        (id) => findMessage(deps, principal, threadId, id),
      );
    },
  );

  app.get(
    '/threads/:threadId/messages',
    {
      config: owner,
      schema: { params: ThreadParams, querystring: MessageListQuery, response: { 200: ListOf(MessageObject), ...problems(400, 401, 404) } },
    },
    async (request) => listMessages(deps, principalOf(request), request.params.threadId, request.query),
  );

  app.get(
    '/threads/:threadId/messages/:messageId',
    { config: owner, schema: { params: MessageParams, response: { 200: MessageObject, ...problems(401, 404) } } },
    async (request) => getMessage(deps, principalOf(request), request.params.threadId, request.params.messageId),
  );

  app.post(
    '/threads/:threadId/messages/:messageId',
    {
      config: owner,
      schema: { params: MessageParams, body: MessagePatch, response: { 200: MessageObject, ...problems(400, 401, 404) } },
    },
    async (request) => updateMessage(deps, principalOf(request), request.params.threadId, request.params.messageId, request.body),
  );

  app.delete(
    '/threads/:threadId/messages/:messageId',
    { config: owner, schema: { params: MessageParams, response: { 200: MessageDeleted, ...problems(400, 401, 404) } } },
    async (request) => deleteMessage(deps, principalOf(request), request.params.threadId, request.params.messageId),
  );
};
