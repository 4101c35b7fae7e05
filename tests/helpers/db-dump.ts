import type { DbHandle } from "../../src/db/client.js";

/**
 * Every row of every table in the public schema, as text (bytea as hex and as latin1 so ciphertext
 * cannot hide a plaintext run). Used to prove that no secret reaches the database in the clear.
 */
export async function dumpAllTables(dbh: DbHandle): Promise<string> {
  const { rows: tables } = await dbh.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
  );
  const out: string[] = [];
  for (const { table_name } of tables) {
    const { rows } = await dbh.query<Record<string, unknown>>(`SELECT * FROM "${table_name}"`);
    for (const row of rows) {
      for (const v of Object.values(row)) {
        if (v instanceof Uint8Array)
          out.push(Buffer.from(v).toString("hex"), Buffer.from(v).toString("latin1"));
        else out.push(typeof v === "string" ? v : JSON.stringify(v));
      }
    }
  }
  return out.join("\n");
}
