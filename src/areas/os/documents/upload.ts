// Reading an upload: the files of a multipart body, each counted while it streams in
// and cut off the moment it passes the size limit, and the optional `metadata` part.
// Everything is held in memory until every file is read and checked, so a request
// that fails anywhere stores nothing.
import type { FastifyRequest } from 'fastify';
import type { Multipart, MultipartFile } from '@fastify/multipart';
import { parse as parseJsonSafely } from 'secure-json-parse';
import { AppError, validation } from '../../../platform/errors.js';
import { METADATA_MAX_BYTES, NAME_MAX_LENGTH } from './schemas.js';

export interface UploadedFile {
  /** The file name as sent, made safe by safeName. */
  name: string;
  /** The part's Content-Type; a hint for text formats only (detect.ts). */
  declaredType: string | undefined;
  bytes: Buffer;
  /** Sent as JSON text: only a text format, whatever its first bytes look like. */
  textOnly?: boolean;
}

export interface Upload {
  files: UploadedFile[];
  /** The `metadata` part as parsed, not yet checked (the service checks it as it checks a JSON body's). */
  metadata: unknown;
}

export interface UploadLimits {
  maxBytes: number;
  maxFiles: number;
}

export const fileTooLarge = (maxBytes: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `A file is larger than the ${maxBytes} bytes one upload may carry; nothing was stored.`);

/** Reads every part of a multipart upload; refuses it whole on the first problem. */
export async function readMultipartUpload(request: FastifyRequest, limits: UploadLimits): Promise<Upload> {
  const files: UploadedFile[] = [];
  let metadata: unknown;
  let metadataSeen = false;
  try {
    const parts = request.parts({
      limits: {
        fileSize: limits.maxBytes,
        files: limits.maxFiles,
        fields: 4,
        fieldSize: METADATA_MAX_BYTES + 1,
        parts: limits.maxFiles + 4,
      },
    });
    for await (const part of parts) {
      if (part.fieldname === 'metadata') {
        if (metadataSeen) throw validation('metadata', 'must be sent once');
        metadataSeen = true;
        metadata = await metadataOf(part);
      } else if (part.fieldname === 'file' && part.type === 'file') {
        const bytes = await readFile(part, limits.maxBytes);
        files.push({ name: safeName(part.filename), declaredType: part.mimetype || undefined, bytes });
      } else {
        if (part.type === 'file') part.file.resume();
        throw validation(
          part.fieldname || '(unnamed part)',
          'is not a part of an upload: send files as "file" and an optional "metadata" JSON object',
        );
      }
    }
  } catch (error) {
    throw asUploadError(error, limits);
  }
  if (files.length === 0) throw validation('file', 'is required: send at least one file part named "file"');
  return { files, metadata };
}

/** The file's bytes, counted as they arrive: over the limit, reading stops at once (the rest is never waited for). */
async function readFile(part: MultipartFile, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  // busboy stops passing data on at the limit but keeps reading the part to its end:
  // destroying the stream ends our wait there, and the route closes the connection.
  const onLimit = () => part.file.destroy(fileTooLarge(maxBytes));
  part.file.once('limit', onLimit);
  try {
    if (part.file.truncated) throw fileTooLarge(maxBytes);
    for await (const chunk of part.file as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes || part.file.truncated) throw fileTooLarge(maxBytes);
      chunks.push(chunk);
    }
    if (part.file.truncated) throw fileTooLarge(maxBytes);
  } finally {
    part.file.off('limit', onLimit);
  }
  return Buffer.concat(chunks, size);
}

async function metadataOf(part: Multipart): Promise<unknown> {
  let text: string;
  if (part.type === 'file')
    text = (await readFile(part, METADATA_MAX_BYTES).catch(() => Promise.reject(metadataTooLarge()))).toString('utf8');
  else if (part.valueTruncated) throw metadataTooLarge();
  // Sent with Content-Type application/json, @fastify/multipart has already parsed it.
  else if (typeof part.value !== 'string') return part.value;
  else text = part.value;
  try {
    return parseJsonSafely(text, null, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw validation('metadata', 'must be a JSON object');
  }
}

const metadataTooLarge = () => validation('metadata', `must be a JSON object of at most ${METADATA_MAX_BYTES} bytes`);

/** @fastify/multipart's and busboy's errors in our terms; ours pass through. */
function asUploadError(error: unknown, limits: UploadLimits): unknown {
  if (error instanceof AppError) return error;
  const { code, statusCode, message } = error as { code?: string; statusCode?: number; message?: string };
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return fileTooLarge(limits.maxBytes);
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
      return new AppError('PAYLOAD_TOO_LARGE', `An upload may carry at most ${limits.maxFiles} files; nothing was stored.`);
    case 'FST_FIELDS_LIMIT':
      return validation('metadata', 'must be sent once; no other fields are accepted');
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return validation('metadata', 'must be a JSON object (its part says application/json but does not parse)');
    case 'FST_PROTO_VIOLATION':
      return new AppError('BAD_REQUEST', 'A part name is not accepted: __proto__, constructor and the like.');
  }
  if (statusCode === 413) return new AppError('PAYLOAD_TOO_LARGE', 'The upload is larger than this server accepts; nothing was stored.');
  // busboy's own: no boundary, a truncated body, a malformed part header.
  return new AppError('BAD_REQUEST', `The multipart body could not be read: ${message ?? 'malformed'}.`);
}

/**
 * A file name kept as text, never as a path: the last segment of whatever path it
 * carries, without control characters, at most 255 characters.
 */
export function safeName(raw: string | undefined): string {
  const base = (raw ?? '').split(/[/\\]/).pop() ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const clean = base.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim();
  // By code points, so a cut never splits a pair; lone surrogates (no character at all) are dropped.
  const name = Array.from(clean)
    .filter((c) => !/^[\ud800-\udfff]$/.test(c))
    .slice(0, NAME_MAX_LENGTH)
    .join('');
  return name === '' ? 'untitled' : name;
}
