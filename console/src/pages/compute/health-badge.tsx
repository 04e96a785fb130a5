// A node's health as a word in a coloured badge (the word carries the meaning, not the colour).
import type { NodeHealth } from '../../../../src/areas/llm/nodes/schemas.js';
import { type MessageKey, t } from '../../i18n/index.js';

const TONE: Record<NodeHealth['status'], string> = {
  healthy: 'badge ok',
  empty: 'badge warn',
  cooldown: 'badge warn',
  unhealthy: 'badge bad',
  disabled: 'badge',
  unknown: 'badge',
};

export function HealthBadge(props: { status: NodeHealth['status'] }) {
  return <span class={TONE[props.status]}>{t(`compute.health.${props.status}` as MessageKey)}</span>;
}
