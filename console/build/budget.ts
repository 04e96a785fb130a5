// The console's size budget (issue: ≤ 150 KB of JavaScript to reach the sign-in page,
// ≤ 300 KB for the whole first load after sign-in; gzip level 9, 1 KB = 1,000 bytes,
// as Vite prints it). Which files each load needs comes from Vite's manifest: the
// sign-in page is the entry and its static imports; after sign-in every chunk may load.
// The build prints it; test/console/budget.test.ts measures the built files again.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Plugin } from 'vite';

export const BUDGET_KB = { signIn: 150, afterSignIn: 300 } as const;

interface ManifestChunk {
  file: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}

/** What each load fetches, as paths relative to the built directory. Written beside it by the build. */
export interface LoadPlan {
  signIn: string[];
  afterSignIn: string[];
}

export function planFromManifest(manifest: Record<string, ManifestChunk>): LoadPlan {
  const entryKey = Object.keys(manifest).find((key) => manifest[key]?.isEntry);
  if (!entryKey) throw new Error('the console build has no entry chunk');
  const closure = (keys: string[], dynamic: boolean, seen = new Set<string>()): Set<string> => {
    for (const key of keys) {
      if (seen.has(key)) continue;
      seen.add(key);
      const chunk = manifest[key];
      if (!chunk) continue;
      closure([...(chunk.imports ?? []), ...(dynamic ? (chunk.dynamicImports ?? []) : [])], dynamic, seen);
    }
    return seen;
  };
  const files = (keys: Set<string>) => [...keys].flatMap((key) => [manifest[key]!.file, ...(manifest[key]!.css ?? [])]);
  return { signIn: [...new Set(files(closure([entryKey], false)))], afterSignIn: [...new Set(files(closure([entryKey], true)))] };
}

export const gzipKb = (file: string) => gzipSync(readFileSync(file), { level: 9 }).length / 1000;

/** JavaScript only, as the budget counts it. */
export function javascriptKb(dir: string, files: string[]): number {
  return files.filter((f) => f.endsWith('.js')).reduce((sum, f) => sum + gzipKb(path.join(dir, f)), 0);
}

export const planPath = (outDir: string) => `${outDir}.load-plan.json`;

/** Prints the two figures after a build and keeps the plan beside the output (not served). */
export function budgetReport(outDir: string): Plugin {
  return {
    name: 'gateway-console-budget',
    apply: 'build',
    closeBundle() {
      const manifestFile = path.join(outDir, '.vite', 'manifest.json');
      if (!existsSync(manifestFile)) return;
      const plan = planFromManifest(JSON.parse(readFileSync(manifestFile, 'utf8')));
      rmSync(path.join(outDir, '.vite'), { recursive: true, force: true });
      writeFileSync(planPath(outDir), `${JSON.stringify(plan, null, 2)}\n`);
      const signIn = javascriptKb(outDir, plan.signIn);
      const after = javascriptKb(outDir, plan.afterSignIn);
      console.log(
        `console budget (gzip -9): sign-in ${signIn.toFixed(2)} KB of ${BUDGET_KB.signIn} KB; ` +
          `first load after sign-in ${after.toFixed(2)} KB of ${BUDGET_KB.afterSignIn} KB`,
      );
    },
  };
}
