// Helpers for the document tests: files of every supported type, built here (a PDF
// with pdf-lib, a DOCX with jszip), and multipart uploads sent as a browser would.
import http from 'node:http';
import { Readable } from 'node:stream';
import JSZip from 'jszip';
import { PDFDocument, StandardFonts } from 'pdf-lib';
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

export async function pdfWith(lines: string[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage();
  for (const [i, line] of lines.entries()) page.drawText(line, { x: 50, y: 750 - i * 20, size: 12, font });
  return pdf.save();
}

export async function docxWith(paragraph: string): Promise<Uint8Array> {
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  );
  zip.file(
    '_rels/.rels',
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
  );
  zip.file(
    'word/document.xml',
    '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">' +
      `<w:body><w:p><w:r><w:t>${paragraph}</w:t></w:r></w:p></w:body></w:document>`,
  );
  return zip.generateAsync({ type: 'uint8array' });
}

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
