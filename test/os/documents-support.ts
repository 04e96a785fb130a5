// Helpers for the document tests: multipart uploads sent as a browser would, a zip
// that is no DOCX, and an upload too large to hold, generated as it is sent.
import http from 'node:http';
import { Readable } from 'node:stream';
import JSZip from 'jszip';
import { sampleDocx, samplePdf } from '../helpers/documents.js';
import type { TestGateway, TestResponse } from '../helpers/gateway.js';

export interface FilePart {
  name: string;
  content: string | Uint8Array;
  type?: string;
}

export type Credential = { token: string } | { apiKey: string } | Record<string, never>;

/** A multipart upload of `files` (as "file" parts) and an optional metadata part. */
export async function uploadFiles(
  gw: TestGateway,
  path: string,
  credential: Credential,
  files: FilePart[],
  options: { metadata?: string; metadataType?: string; extraParts?: [string, string][] } = {},
): Promise<TestResponse> {
  const form = new FormData();
  for (const file of files) form.append('file', new Blob([file.content as BlobPart], file.type ? { type: file.type } : {}), file.name);
  if (options.metadata !== undefined)
    form.append('metadata', options.metadataType ? new Blob([options.metadata], { type: options.metadataType }) : options.metadata);
  for (const [name, value] of options.extraParts ?? []) form.append(name, value);
  const headers: Record<string, string> = {};
  if ('token' in credential) headers.authorization = `Bearer ${credential.token}`;
  if ('apiKey' in credential) headers['x-api-key'] = credential.apiKey;
  const response = await fetch(gw.url + path, { method: 'POST', headers, body: form });
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

// Files of every type come from test/helpers/documents.ts (samplePdf, sampleDocx…).
export const pdfWith = (lines: string[]): Promise<Buffer> => samplePdf([lines]);
export const docxWith = (paragraph: string): Promise<Buffer> => sampleDocx([{ paragraph }]);

export async function plainZip(): Promise<Uint8Array> {
  const zip = new JSZip();
  zip.file('readme.txt', 'not a word document');
  return zip.generateAsync({ type: 'uint8array' });
}

/**
 * A multipart upload of one file of `size` bytes, generated as it is sent (never held
 * in memory). Resolves with the answer and how many bytes the server took before it.
 */
export function streamLargeUpload(
  gw: TestGateway,
  path: string,
  apiKey: string,
  size: number,
): Promise<{ status: number; body: any; sentBeforeAnswer: number; ms: number }> {
  const boundary = `----gateway-test-${Date.now()}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const block = Buffer.alloc(64 * 1024, 'a');
  let sent = 0;
  let remaining = size;
  const body = new Readable({
    read() {
      if (sent === 0) {
        sent += head.length;
        this.push(head);
        return;
      }
      if (remaining <= 0) {
        this.push(tail);
        this.push(null);
        return;
      }
      const piece = remaining >= block.length ? block : block.subarray(0, remaining);
      remaining -= piece.length;
      sent += piece.length;
      this.push(piece);
    },
  });
  const { port } = new URL(gw.url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        agent: false,
        headers: {
          'x-api-key': apiKey,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(head.length + size + tail.length),
        },
      },
      (res) => {
        const sentBeforeAnswer = sent;
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          body.destroy();
          const text = Buffer.concat(parts).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            body: text ? JSON.parse(text) : undefined,
            sentBeforeAnswer,
            ms: performance.now() - started,
          });
        });
      },
    );
    // The server closes the connection once it has answered: writing the rest then fails, as it should.
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    req.setTimeout(30_000, () => req.destroy(new Error('no answer to the large upload within 30 s')));
    body.pipe(req);
  });
}
