// A document's media type, decided by its content: the name and the declared type
// only choose between text formats the bytes alone cannot tell apart (CSV, markdown,
// a fragment of HTML). A renamed binary is refused, a renamed text file is read as text.
import { isUtf8 } from 'node:buffer';
import { AppError } from '../../../platform/errors.js';
import { MEDIA_TYPES, type MediaType } from './media-types.js';

export const unsupportedMediaType = (name: string, why: string) =>
  new AppError(
    'UNSUPPORTED_MEDIA_TYPE',
    `${JSON.stringify(name)} ${why}. Supported: plain text, markdown, HTML, CSV, JSON (UTF-8), PDF and DOCX.`,
  );

/** How far into a text the markup and delimiter checks look. */
const SNIFF_CHARS = 64 * 1024;

/** `textOnly`: the bytes are a JSON body's text, which can hold no PDF or DOCX. */
export function detectMediaType(bytes: Buffer, name: string, declaredType?: string, options: { textOnly?: boolean } = {}): MediaType {
  if (!options.textOnly && startsWith(bytes, '%PDF-')) return MEDIA_TYPES.pdf;
  if (!options.textOnly && (startsWith(bytes, 'PK\x03\x04') || startsWith(bytes, 'PK\x05\x06'))) {
    if (zipEntryNames(bytes)?.includes('word/document.xml')) return MEDIA_TYPES.docx;
    throw unsupportedMediaType(name, 'is a zip archive but not a Word document (DOCX)');
  }
  // NUL is valid UTF-8 but no text holds it: UTF-16 and binary files do.
  if (!isUtf8(bytes) || bytes.includes(0)) throw unsupportedMediaType(name, 'is neither UTF-8 text nor a PDF or DOCX file');

  const text = bytes.toString('utf8', 0, Math.min(bytes.length, SNIFF_CHARS * 4)).replace(/^\uFEFF/, '');
  const head = text.trimStart();
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  const declared = declaredType?.split(';')[0]?.trim().toLowerCase();

  if ((head.startsWith('{') || head.startsWith('[')) && isJsonContainer(bytes)) return MEDIA_TYPES.json;
  if (/^<!doctype\s+html[\s>]/i.test(head) || /^<html[\s>]/i.test(head)) return MEDIA_TYPES.html;
  const saysHtml = extension === 'html' || extension === 'htm' || declared === 'text/html' || declared === 'application/xhtml+xml';
  if (saysHtml && /<\/?[a-z][a-z0-9-]*(\s[^<>]*)?\/?>/i.test(text.slice(0, SNIFF_CHARS))) return MEDIA_TYPES.html;
  const saysCsv = extension === 'csv' || declared === 'text/csv' || declared === 'application/csv';
  if (saysCsv && hasConsistentDelimiter(text.slice(0, SNIFF_CHARS))) return MEDIA_TYPES.csv;
  if (extension === 'md' || extension === 'markdown' || declared === 'text/markdown' || declared === 'text/x-markdown')
    return MEDIA_TYPES.markdown;
  return MEDIA_TYPES.text;
}

const startsWith = (bytes: Buffer, magic: string) => bytes.length >= magic.length && bytes.toString('latin1', 0, magic.length) === magic;

function isJsonContainer(bytes: Buffer): boolean {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, ''));
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}

/**
 * Whether the first rows (up to 20) split into the same number (≥ 2) of fields by
 * one of the usual delimiters; quoted fields may hold delimiters and line breaks.
 */
function hasConsistentDelimiter(text: string): boolean {
  const rows = splitRows(text).slice(0, 21);
  // The last row may be cut off by the sniffing window.
  if (rows.length > 20) rows.pop();
  if (rows.length === 0) return false;
  return [',', ';', '\t', '|'].some((delimiter) => {
    const counts = rows.map((row) => countOutsideQuotes(row, delimiter));
    return counts[0]! > 0 && counts.every((n) => n === counts[0]);
  });
}

function splitRows(text: string): string[] {
  const rows: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (c === '\n' && !quoted) {
      rows.push(text.slice(start, i).replace(/\r$/, ''));
      start = i + 1;
    }
  }
  rows.push(text.slice(start));
  return rows.filter((row) => row.trim() !== '');
}

function countOutsideQuotes(row: string, delimiter: string): number {
  let quoted = false;
  let n = 0;
  for (const c of row) {
    if (c === '"') quoted = !quoted;
    else if (c === delimiter && !quoted) n++;
  }
  return n;
}

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_ENTRY_SIGNATURE = 0x02014b50;

/**
 * The names in a zip's central directory (read from its end record), or undefined
 * when the archive is malformed. Nothing is decompressed here.
 */
export function zipEntryNames(bytes: Buffer): string[] | undefined {
  // The end record is 22 bytes plus a comment of up to 65,535.
  const earliest = Math.max(0, bytes.length - 22 - 0xffff);
  let eocd = -1;
  for (let i = bytes.length - 22; i >= earliest; i--) {
    if (bytes.readUInt32LE(i) === EOCD_SIGNATURE) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return undefined;
  const entries = bytes.readUInt16LE(eocd + 10);
  const offset = bytes.readUInt32LE(eocd + 16);
  const names: string[] = [];
  let at = offset;
  for (let i = 0; i < entries; i++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== CENTRAL_ENTRY_SIGNATURE) return undefined;
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    if (at + 46 + nameLength > bytes.length) return undefined;
    names.push(bytes.toString('utf8', at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return names;
}
