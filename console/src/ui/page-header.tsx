// A page's title with its main action beside it (wrapping under it on a phone).
export function PageHeader(props: { title: string; actionLabel: string; onAction: () => void }) {
  return (
    <div class="page-head">
      <h1>{props.title}</h1>
      <button type="button" class="primary" onClick={props.onAction}>
        {props.actionLabel}
      </button>
    </div>
  );
}
