// Incremental line framing for engine streams: NDJSON (Ollama) and Server-Sent
// Events (OpenAI-compatible). Both are fed raw body chunks as they arrive and
// push what completed into a caller-owned array, so the hot loop allocates only
// the strings it hands out. Frames may be split anywhere, even inside a UTF-8
// character; lines end in LF or CRLF.
import { StringDecoder } from 'node:string_decoder';

/** A line longer than this is not a protocol frame: the node is misbehaving. */
export const MAX_LINE_CHARS = 8 * 1024 * 1024;

export class LineTooLongError extends Error {
  constructor() {
    super(`engine stream line longer than ${MAX_LINE_CHARS} characters`);
  }
}

export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';

  /** Appends every line completed by `chunk` (without its terminator) to `out`. */
  push(chunk: Buffer, out: string[]): void {
    const decoded = this.decoder.write(chunk);
    // The carried part has no newline: scan only the new text. Without a newline in it,
    // append and stop: searching `rest + decoded` would flatten (copy) the whole
    // carried line on every chunk, O(n²) for a long line.
    const first = decoded.indexOf('\n');
    if (first === -1) {
      this.rest += decoded;
      if (this.rest.length > MAX_LINE_CHARS) throw new LineTooLongError();
      return;
    }
    const carried = this.rest.length;
    const text = carried === 0 ? decoded : this.rest + decoded;
    let start = 0;
    let newline = carried + first;
    while (newline !== -1) {
      const end = newline > start && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      out.push(text.slice(start, end));
      start = newline + 1;
      newline = text.indexOf('\n', start);
    }
    this.rest = start === 0 ? text : text.slice(start);
    if (this.rest.length > MAX_LINE_CHARS) throw new LineTooLongError();
  }

  /** The body ended: a last line without terminator still counts. */
  end(out: string[]): void {
    let text = this.rest + this.decoder.end();
    this.rest = '';
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text !== '') out.push(text);
  }
}

/**
 * Server-Sent Events: collects `data:` lines into one payload per event (joined
 * by '\n' as the spec says) and pushes it when the blank line ends the event.
 * Comments (`:` lines, used as heartbeats) and other fields are skipped.
 */
export class SseParser {
  private readonly lines = new LineSplitter();
  private readonly scratch: string[] = [];
  private data: string | undefined;

  push(chunk: Buffer, out: string[]): void {
    this.lines.push(chunk, this.scratch);
    this.drain(out);
  }

  /** The body ended: an event missing its final blank line is still delivered. */
  end(out: string[]): void {
    this.lines.end(this.scratch);
    this.drain(out);
    if (this.data !== undefined) out.push(this.data);
    this.data = undefined;
  }

  private drain(out: string[]): void {
    const lines = this.scratch;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line === '') {
        if (this.data !== undefined) out.push(this.data);
        this.data = undefined;
      } else if (line.startsWith('data')) {
        // `data:value`, `data: value` or a bare `data` (empty value).
        if (line.length > 4 && line.charCodeAt(4) !== 58 /* : */) continue; // a field named e.g. `database`
        const value = line.length <= 5 ? '' : line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
        this.data = this.data === undefined ? value : `${this.data}\n${value}`;
        if (this.data.length > MAX_LINE_CHARS) throw new LineTooLongError();
      }
      // Comments (':' …) and the event/id/retry fields carry nothing we use.
    }
    lines.length = 0;
  }
}
