// A problem+json 400 names the fields it refuses (`errors: [{field, message}]`, the field
// as a client wrote it: `issuer`, `allowedEmailDomains[2]`, `roleMapping.admins`). A form
// shows each message under the field it names; what names no field of the form goes in
// the form's own alert.
import { isApiError } from '../api/client.js';
import { problemText } from './error-view.js';

export interface FormProblem {
  /** Field name → its messages, joined. */
  fields: Record<string, string>;
  /** The alert under the form: the detail when no field of the form was named. */
  summary: string;
}

/** The top-level field a path names: `allowedEmailDomains[2]` → `allowedEmailDomains`. */
export const topField = (path: string): string => path.split(/[.[]/, 1)[0] ?? path;

export function formProblem(error: unknown, known: readonly string[], summaryWhenFields: string): FormProblem {
  const fields: Record<string, string> = {};
  let unmatched = false;
  if (isApiError(error))
    for (const item of error.problem.errors ?? []) {
      const name = topField(item.field);
      if (!known.includes(name)) {
        unmatched = true;
        continue;
      }
      const detail = item.field === name ? item.message : `${item.field.slice(name.length).replace(/^\./, '')}: ${item.message}`;
      fields[name] = fields[name] ? `${fields[name]}; ${detail}` : detail;
    }
  const matched = Object.keys(fields).length > 0;
  return { fields, summary: matched && !unmatched ? summaryWhenFields : problemText(error) };
}

/** The props that tie an input to its error line (`<FieldError>` renders the line). */
export function invalidProps(fields: Record<string, string>, name: string, errorId: string, hintId?: string) {
  const describedBy = [hintId, fields[name] ? errorId : undefined].filter(Boolean).join(' ');
  return { 'aria-invalid': fields[name] ? ('true' as const) : undefined, 'aria-describedby': describedBy || undefined };
}
