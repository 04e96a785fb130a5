// The line under a field that says what the server refused in it (see field-errors.ts).
export function FieldError(props: { id: string; message: string | undefined }) {
  return props.message ? (
    <p id={props.id} class="form-error field-error">
      {props.message}
    </p>
  ) : null;
}
