// The scale benchmark's verdicts (issue 16's targets) and its table.
import { fmt } from '../support/stats.js';

export interface Check {
  figure: string;
  value: string;
  target: string;
  /** null: reported, no target. */
  pass: boolean | null;
  note?: string;
}

export const TARGETS = {
  ingestChunksPerSecond: 200,
  searchP95Ms: 50,
  recallAt10: 0.95,
  chatP99Ratio: 2,
};

export function atLeast(figure: string, value: number, target: number, unit = '', digits = 1, note?: string): Check {
  return { figure, value: `${fmt(value, digits)}${unit}`, target: `≥ ${target}${unit}`, pass: value >= target, ...(note ? { note } : {}) };
}

export function atMost(figure: string, value: number, target: number, unit = '', digits = 1, note?: string): Check {
  return { figure, value: `${fmt(value, digits)}${unit}`, target: `≤ ${target}${unit}`, pass: value <= target, ...(note ? { note } : {}) };
}

export function info(figure: string, value: string, note?: string): Check {
  return { figure, value, target: '–', pass: null, ...(note ? { note } : {}) };
}

export function printTable(checks: Check[]): void {
  const widths = [
    Math.max(6, ...checks.map((c) => c.figure.length)),
    Math.max(5, ...checks.map((c) => c.value.length)),
    Math.max(6, ...checks.map((c) => c.target.length)),
  ];
  const row = (cells: string[]) => cells.map((cell, i) => (i < widths.length ? cell.padEnd(widths[i]!) : cell)).join('  ');
  console.log(row(['figure', 'value', 'target', 'verdict']));
  console.log(row(widths.map((w) => '-'.repeat(w)).concat('-------')));
  for (const c of checks) console.log(row([c.figure, c.value, c.target, c.pass === null ? '' : c.pass ? 'PASS' : 'FAIL']));
  const notes = checks.filter((c) => c.note);
  if (notes.length) console.log();
  for (const c of notes) console.log(`${c.figure}: ${c.note}`);
}
