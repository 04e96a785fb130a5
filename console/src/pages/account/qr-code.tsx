// A QR code drawn here, never fetched: uqr encodes the text into a matrix of modules and
// each horizontal run of dark modules becomes one <rect> (a few hundred, not thousands).
import { useMemo } from 'preact/hooks';
import { encode } from 'uqr';

export function QrCode(props: { text: string; label: string }) {
  const { size, runs } = useMemo(() => {
    const { data } = encode(props.text, { ecc: 'M', border: 4 });
    const found: { x: number; y: number; width: number }[] = [];
    data.forEach((row, y) => {
      let start = -1;
      row.forEach((dark, x) => {
        if (dark && start < 0) start = x;
        if ((!dark || x === row.length - 1) && start >= 0) {
          found.push({ x: start, y, width: (dark ? x + 1 : x) - start });
          start = -1;
        }
      });
    });
    return { size: data.length, runs: found };
  }, [props.text]);
  return (
    <svg role="img" aria-label={props.label} viewBox={`0 0 ${size} ${size}`} class="qr-code" shape-rendering="crispEdges">
      <rect class="qr-light" x={0} y={0} width={size} height={size} />
      {runs.map((run) => (
        <rect key={`${run.x}-${run.y}`} class="qr-dark" x={run.x} y={run.y} width={run.width} height={1} />
      ))}
    </svg>
  );
}
