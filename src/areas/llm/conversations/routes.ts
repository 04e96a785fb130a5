// The persisted chat (spec 2.7, 4): `POST /chat` keeps the conversation for a
// signed-in person, and `/conversations` lists, reads, renames and deletes what it
// kept. Personal records: another person's conversation is a 404 even inside the
// tenant (its admin included); API keys get 403, and on `POST /chat` the spec's 500
// (rule 3). Prompts and answers are never logged.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { ListQuery } from '../../paging.js';
import { problems } from '../../schemas.js';
import { answerJson, answerStream } from './answer.js';
import { requestedFrameMode } from '../chat/frames.js';
import {
  ChatBody,
  ChatTurn,
  Conversation,
  ConversationPage,
  ConversationParams,
  ConversationPatch,
  ConversationWithMessages,
  PageQuery,
} from './schemas.js';
import {
  deleteConversation,
  getConversation,
  listConversations,
  renameConversation,
  requireChatUser,
  type ConversationDeps,
} from './service.js';
import { beginTurn } from './turn.js';

/**
 * Names the turn's conversation on every answer once the turn is stored, errors
 * included: a first turn whose engine failed before answering still made its
 * conversation (with the message kept), and this is how the caller continues it.
 */
export const CONVERSATION_HEADER = 'x-conversation-id';

export const conversationRoutes: FastifyPluginAsyncTypebox<{ deps: ConversationDeps }> = async (app, { deps }) => {
  app.post(
    '/chat',
    {
      config: { access: 'personal' },
      schema: { body: ChatBody, response: { 200: ChatTurn, ...problems(400, 401, 404, 409, 500, 503) } },
    },
    async (request, reply) => {
      // Spec rule 3 first: an API key is refused before anything is read or stored.
      const principal = requireChatUser(principalOf(request));
      const { body } = request;
      if (body.stream !== true) {
        const turn = await beginTurn(deps, principal, String(request.id), body);
        reply.header(CONVERSATION_HEADER, turn.conversationId);
        return answerJson(deps, turn, reply);
      }
      // Read before the turn is stored, so that nothing can fail between storing it and generating it.
      const frameMode = requestedFrameMode(body.stream_options) ?? (await deps.router.settings(principal.tenantId)).streamMetadataFrame;
      const turn = await beginTurn(deps, principal, String(request.id), body);
      reply.header(CONVERSATION_HEADER, turn.conversationId);
      await answerStream(deps, turn, reply, { frameMode, includeUsage: body.stream_options?.include_usage === true });
      return reply;
    },
  );

  app.get(
    '/conversations',
    {
      config: { access: 'personal' },
      schema: { querystring: ListQuery, response: { 200: ConversationPage, ...problems(400, 401, 403) } },
    },
    async (request) => listConversations(deps, principalOf(request), request.query),
  );

  app.get(
    '/conversations/:conversationId',
    {
      config: { access: 'personal' },
      schema: {
        params: ConversationParams,
        querystring: PageQuery,
        response: { 200: ConversationWithMessages, ...problems(400, 401, 403, 404) },
      },
    },
    async (request) => getConversation(deps, principalOf(request), request.params.conversationId, request.query),
  );

  app.patch(
    '/conversations/:conversationId',
    {
      config: { access: 'personal' },
      schema: { params: ConversationParams, body: ConversationPatch, response: { 200: Conversation, ...problems(400, 401, 403, 404) } },
    },
    async (request) => renameConversation(deps, principalOf(request), request.params.conversationId, request.body),
  );

  app.delete(
    '/conversations/:conversationId',
    {
      config: { access: 'personal' },
      schema: { params: ConversationParams, response: { 204: Type.Null(), ...problems(401, 403, 404) } },
    },
    async (request, reply) => {
      await deleteConversation(deps, principalOf(request), request.params.conversationId);
      return reply.code(204).send(null);
    },
  );
};
