// The rules of src/ARCHITECTURE.md, checked on the import graph of src/ so a change
// that breaks one fails here, naming the import.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { importGraph, unitCycles, type ImportEdge } from './import-graph.js';

const edges = importGraph(path.resolve(import.meta.dirname, '../../src'));
const areaOf = (file: string) => (file.startsWith('areas/') && file.split('/').length > 2 ? file.split('/')[1] : undefined);
const show = (found: ImportEdge[]) => found.map((e) => `${e.from} -> ${e.to}${e.typeOnly ? ' (type)' : ''}`).join('\n');

describe('src/ imports run one way', () => {
  it('reads the whole tree', () => {
    assert.ok(edges.length > 300, `${edges.length} imports`);
    assert.ok(edges.some((e) => e.from === 'gateway/app.ts' && e.to.startsWith('areas/')));
  });

  it('no cycle between feature folders', () => {
    assert.deepEqual(unitCycles(edges), []);
  });

  it('no area imports another area at run time', () => {
    const found = edges.filter((e) => !e.typeOnly && areaOf(e.from) && areaOf(e.to) && areaOf(e.from) !== areaOf(e.to));
    assert.equal(show(found), '');
  });

  it('nothing under areas/ imports the edge (gateway/) or the CLI (cli/)', () => {
    const found = edges.filter((e) => e.from.startsWith('areas/') && (e.to.startsWith('gateway/') || e.to.startsWith('cli/')));
    assert.equal(show(found), '');
  });

  it('nothing under platform/ or engines/ imports areas/', () => {
    const found = edges.filter((e) => (e.from.startsWith('platform/') || e.from.startsWith('engines/')) && e.to.startsWith('areas/'));
    assert.equal(show(found), '');
  });

  it('no feature file imports AppContext: features get narrow dependencies from the composition root', () => {
    const found = edges.filter((e) => e.from.startsWith('areas/') && e.to === 'context.ts');
    assert.equal(show(found), '');
  });

  it('the server does not import the CLI', () => {
    const found = edges.filter((e) => !e.from.startsWith('cli/') && e.to.startsWith('cli/'));
    assert.equal(show(found), '');
  });
});
