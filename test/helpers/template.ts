// Builds the migrated database once per test run; every test file starts from a copy.
// Embedded: a PGlite data dir under .test-tmp/template. PostgreSQL (TEST_DATABASE_URL):
// a template database that each file clones with CREATE DATABASE … TEMPLATE.
import { rmSync, mkdirSync } from 'node:fs';
import pg from 'pg';
import { openDatabase } from '../../src/platform/db/database.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { WordVectorEmbedder } from '../../src/areas/os/embedders/word-vectors/embedder.js';
import { TEMPLATE_DIR, TEMPLATE_DATABASE, TEST_TMP, WORD_VECTORS_FILE, adminUrl } from './paths.js';

// Converts the word vectors if no earlier run left them (a fresh clone: once), in the
// foreground: nothing runs beside it yet, and a loaded machine would starve a niced child.
mkdirSync(TEST_TMP, { recursive: true });
const wordVectors = new WordVectorEmbedder({ dataDir: TEST_TMP, binaryFile: WORD_VECTORS_FILE, foreground: true });
await wordVectors.ready();
if (wordVectors.preparation?.converted) console.log(`word vectors converted in ${wordVectors.preparation.conversionMs} ms`);
await wordVectors.close();

const serverUrl = process.env.TEST_DATABASE_URL;
if (serverUrl) {
  mkdirSync(TEST_TMP, { recursive: true }); // each test's gateway keeps its data dir there, even on a fresh clone
  const admin = new pg.Client({ connectionString: adminUrl(serverUrl) });
  await admin.connect();
  await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [TEMPLATE_DATABASE]);
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE}`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${TEMPLATE_DATABASE}`;
  const db = await openDatabase({ dataDir: TEMPLATE_DIR, databaseUrl: url.toString() });
  const result = await migrate(db);
  await db.close();
  console.log(`template database ${TEMPLATE_DATABASE} ready (pgvector: ${result.vector ? 'yes' : 'no'})`);
} else {
  rmSync(TEMPLATE_DIR, { recursive: true, force: true });
  mkdirSync(TEMPLATE_DIR, { recursive: true });
  const db = await openDatabase({ dataDir: TEMPLATE_DIR });
  await migrate(db);
  await db.close();
  console.log(`template data dir ${TEMPLATE_DIR} ready`);
}
