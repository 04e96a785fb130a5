// CSV (RFC 4180: quoted fields may hold separators, quotes and line breaks) as one
// table whose first row is the header. Spreadsheets export with ";" or tabs where
// "," is the decimal mark, so the separator is the one the first line uses most.
import type { Extraction } from './types.js';
import { ExtractionError } from './types.js';

export function extractCsv(text: string): Extraction {
  const rows = parseCsv(text, sniffSeparator(text)).filter((row) => row.some((cell) => cell.trim() !== ''));
  if (rows.length === 0) return { title: null, blocks: [] };
  const [header, ...body] = rows.map((row) => row.map((cell) => cell.replace(/\s+/g, ' ').trim()));
  return { title: null, blocks: [{ kind: 'table', header: [header!], rows: body, page: null }] };
}

function sniffSeparator(text: string): string {
  const end = text.indexOf('\n');
  const firstLine = (end < 0 ? text : text.slice(0, end)).replace(/"[^"]*"/g, '');
  let best = ',';
  let bestCount = 0;
  for (const separator of [',', ';', '\t', '|']) {
    const count = firstLine.split(separator).length - 1;
    if (count > bestCount) {
      best = separator;
      bestCount = count;
    }
  }
  return best;
}

export function parseCsv(text: string, separator = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c !== '"') field += c;
      else if (text[i + 1] === '"') {
        field += '"';
        i++;
      } else quoted = false;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === separator) endField();
    else if (c === '\n') {
      endField();
      rows.push(row);
      row = [];
    } else if (c !== '\r') field += c;
  }
  if (quoted) throw new ExtractionError('malformed', 'The CSV file ends inside a quoted field.');
  if (field !== '' || row.length > 0) {
    endField();
    rows.push(row);
  }
  return rows;
}
