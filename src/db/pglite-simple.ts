import type { PGlite } from "@electric-sql/pglite";

/**
 * One simple-protocol Query message straight into PGlite, for the benchmarked hot statements
 * (`EXECUTE name(<literals>)`). PGlite's `exec()` follows every Query with a separate Sync call into the
 * engine and runs every result through its generic result builder; for a single statement that was
 * 53–70 µs per call against 28–41 µs for the message alone. This sends only the Query message through
 * PGlite's `execProtocol()` (which parses the backend messages and throws PostgreSQL's error with its
 * SQLSTATE), under the same two mutexes `exec()` takes, so it can never run inside another caller's
 * open transaction.
 *
 * Rows are decoded for the column types the hot statements return: text-like values (text, uuid, …) as
 * strings, bool, int2/int4 and json/jsonb. Any other type is refused with an error rather than returned
 * in a different shape from the PostgreSQL path (`pg` parses every type).
 */

const OID = { bool: 16, int2: 21, int4: 23, text: 25, json: 114, varchar: 1043, uuid: 2950, jsonb: 3802 };
const TEXT_LIKE = new Set([OID.text, OID.varchar, OID.uuid, 19 /* name */]);

const encoder = new TextEncoder();

function queryMessage(text: string): Uint8Array {
  const body = encoder.encode(text);
  const msg = new Uint8Array(body.length + 6);
  msg[0] = 0x51; // 'Q'
  new DataView(msg.buffer).setInt32(1, body.length + 5);
  msg.set(body, 5);
  return msg; // the last byte stays 0: the string's terminator
}

function decode(type: number, raw: string): unknown {
  if (TEXT_LIKE.has(type)) return raw;
  if (type === OID.bool) return raw === "t";
  if (type === OID.int2 || type === OID.int4) return Number(raw);
  if (type === OID.json || type === OID.jsonb) return JSON.parse(raw);
  throw new Error(`simple(): column type ${type} is not decoded on PGlite; use query() for it`);
}

export async function pgliteSimple<T>(client: PGlite, text: string): Promise<T[]> {
  const { messages } = await client._runExclusiveTransaction(() =>
    client._runExclusiveQuery(() => client.execProtocol(queryMessage(text))),
  );
  // The rows of the last result set.
  let fields: { name: string; dataTypeID: number }[] = [];
  let rows: Record<string, unknown>[] = [];
  for (const m of messages) {
    if (m.name === "rowDescription") {
      fields = (m as unknown as { fields: typeof fields }).fields;
      rows = [];
    } else if (m.name === "dataRow") {
      const values = (m as unknown as { fields: (string | null)[] }).fields;
      const row: Record<string, unknown> = {};
      values.forEach((v, i) => {
        const f = fields[i] as (typeof fields)[number];
        row[f.name] = v === null ? null : decode(f.dataTypeID, v);
      });
      rows.push(row);
    }
  }
  return rows as T[];
}
