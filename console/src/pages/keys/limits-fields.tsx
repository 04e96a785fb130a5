// The limits of a key as number inputs (create and edit share them), and reading
// them back from the form as the PATCH body's LimitsInput. An empty field is no limit.
import type { Limits, LimitName, LimitsInput, LIMIT_BOUNDS } from '../../../../src/platform/rate-limits/limits.js';
import { t } from '../../i18n/index.js';

// The server's bounds, typed by the server's own `as const` object: tsc fails if they
// drift (a value import would pull TypeBox into the bundle).
const BOUNDS: typeof LIMIT_BOUNDS = {
  requestsPerMinute: 1_000_000,
  tokensPerMinute: 1_000_000_000,
  tokensPerDay: 100_000_000_000,
  tokensPerMonth: 1_000_000_000_000,
  toolCallsPerMinute: 1_000_000,
};
export const LIMIT_FIELDS = Object.keys(BOUNDS) as LimitName[];

const fieldName = (name: LimitName) => `limit-${name}`;

export function LimitsFields(props: { initial?: Limits | undefined; idPrefix: string }) {
  const hintId = `${props.idPrefix}-limits-hint`;
  return (
    <fieldset class="stack" aria-describedby={hintId}>
      <legend>{t('keys.limitsLegend')}</legend>
      <p id={hintId} class="muted key-legend-hint">
        {t('keys.limitsHint')}
      </p>
      <div class="row">
        {LIMIT_FIELDS.map((name) => (
          <label key={name}>
            {t(`keys.limit.${name}`)}
            <input
              name={fieldName(name)}
              type="number"
              inputMode="numeric"
              min={1}
              max={BOUNDS[name]}
              step={1}
              defaultValue={props.initial?.[name] === undefined ? '' : String(props.initial[name])}
            />
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/** The limits typed in the form (only those filled in), or the message for the first bad one. */
export function readLimits(form: FormData): { limits: LimitsInput } | { error: string } {
  const limits: LimitsInput = {};
  for (const name of LIMIT_FIELDS) {
    const raw = String(form.get(fieldName(name)) ?? '').trim();
    if (!raw) continue;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < 1 || value > BOUNDS[name])
      return { error: t('keys.limitInvalid', { field: t(`keys.limit.${name}`), max: BOUNDS[name].toLocaleString() }) };
    limits[name] = value;
  }
  return { limits };
}

/** "60 requests/min, 100,000 tokens/day", or "none". */
export function limitsSummary(limits: Limits): string {
  const parts = LIMIT_FIELDS.filter((name) => limits[name] !== undefined).map((name) =>
    t(`keys.limitShort.${name}`, { value: (limits[name] as number).toLocaleString() }),
  );
  return parts.length ? parts.join(', ') : t('keys.noLimits');
}
