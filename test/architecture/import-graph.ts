// The import graph of src/, read with TypeScript's own parser: which file imports
// which, and whether only for types (erased at run time) or for values.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  from: string; // path relative to src/, e.g. `areas/auth/users/service.ts`
  to: string;
  typeOnly: boolean;
}

export function importGraph(srcDir: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of walk(srcDir).filter((f) => f.endsWith('.ts'))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
    for (const statement of source.statements) {
      const target = moduleOf(statement);
      if (!target?.specifier.startsWith('.')) continue;
      const resolved = path.resolve(path.dirname(file), target.specifier).replace(/\.js$/, '.ts');
      edges.push({ from: path.relative(srcDir, file), to: path.relative(srcDir, resolved), typeOnly: target.typeOnly });
    }
  }
  return edges;
}

function moduleOf(statement: ts.Statement): { specifier: string; typeOnly: boolean } | undefined {
  if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
    const clause = statement.importClause;
    const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
    // `import type {…}`, or `import { type A, type B }` with nothing else: erased.
    const typeOnly =
      clause !== undefined &&
      (clause.isTypeOnly || (!clause.name && named !== undefined && named.length > 0 && named.every((e) => e.isTypeOnly)));
    return { specifier: statement.moduleSpecifier.text, typeOnly };
  }
  if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
    return { specifier: statement.moduleSpecifier.text, typeOnly: statement.isTypeOnly };
  }
  return undefined;
}

/**
 * The unit a file belongs to: its feature folder (`areas/auth/users`, `engines/local`,
 * `platform/db`, `gateway`, `cli`). A file that sits above the feature folders
 * (`areas/guard.ts`, `areas/llm/routes.ts`, `engines/types.ts`, `context.ts`) is a
 * unit of its own: it composes features or holds what they share.
 */
export function unitOf(file: string): string {
  const parts = file.split('/');
  const featureDepth = parts[0] === 'areas' ? 3 : parts[0] === 'engines' ? 2 : 1;
  return parts.length > featureDepth ? parts.slice(0, featureDepth === 1 ? Math.min(2, parts.length - 1) : featureDepth).join('/') : file;
}

/** Cycles between units, each as the list of units around it. */
export function unitCycles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    const [a, b] = [unitOf(from), unitOf(to)];
    if (a !== b) next.set(a, (next.get(a) ?? new Set()).add(b));
  }
  // Tarjan's strongly connected components: any with more than one unit is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (unit: string) => {
    index.set(unit, index.size);
    low.set(unit, index.get(unit)!);
    stack.push(unit);
    for (const other of next.get(unit) ?? []) {
      if (!index.has(other)) {
        visit(other);
        low.set(unit, Math.min(low.get(unit)!, low.get(other)!));
      } else if (stack.includes(other)) low.set(unit, Math.min(low.get(unit)!, index.get(other)!));
    }
    if (low.get(unit) === index.get(unit)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        component.push(member);
      } while (member !== unit);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const unit of next.keys()) if (!index.has(unit)) visit(unit);
  return cycles;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
}
