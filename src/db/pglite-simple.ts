import type { PGlite } from "@electric-sql/pglite";

/**
 * One simple-protocol Query message straight into PGlite, for the benchmarked hot statements
 * (`EXECUTE name(<literals>)`). PGlite's `exec()` follows every Query with a separate Sync call into the
 * engine, and parses every result through its generic type parsers; for a single statement that was
 * 53–70 µs per call against 28–41 µs for the message alone. This sends only the Query message, under
 * the same two mutexes `exec()` takes, so it can never run inside another caller's open transaction.
 *
 * Rows are decoded for the column types the hot statements return: text-like values (text, uuid, …) as
 * strings, bool, int2/int4 and json/jsonb. Any other type is refused with an error rather than returned
 * in a different shape from the PostgreSQL path (`pg` parses every type).
 */

const OID = { bool: 16, int2: 21, int4: 23, text: 25, json: 114, varchar: 1043, uuid: 2950, jsonb: 3802 };
const TEXT_LIKE = new Set([OID.text, OID.varchar, OID.uuid, 19 /* name */]);

type Field = { name: string; type: number };

/** PostgreSQL's error, shaped like the drivers' (`code` is the SQLSTATE the error handler maps). */
class PgliteSimpleError extends Error {
  code?: string;
  severity?: string;
  detail?: string;
  hint?: string;
  constructor(fields: Record<string, string>) {
    super(fields.M ?? "database error");
    this.name = "DatabaseError";
    this.code = fields.C;
    this.severity = fields.S;
    this.detail = fields.D;
    this.hint = fields.H;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function queryMessage(text: string): Uint8Array {
  const body = encoder.encode(text);
  const msg = new Uint8Array(body.length + 6);
  const view = new DataView(msg.buffer);
  msg[0] = 0x51; // 'Q'
  view.setInt32(1, body.length + 5);
  msg.set(body, 5);
  return msg; // the last byte stays 0: the string's terminator
}

function cstring(buf: Uint8Array, start: number): [string, number] {
  let end = start;
  while (end < buf.length && buf[end] !== 0) end++;
  return [decoder.decode(buf.subarray(start, end)), end + 1];
}

function decode(type: number, raw: string): unknown {
  if (TEXT_LIKE.has(type)) return raw;
  if (type === OID.bool) return raw === "t";
  if (type === OID.int2 || type === OID.int4) return Number(raw);
  if (type === OID.json || type === OID.jsonb) return JSON.parse(raw);
  throw new Error(`simple(): column type ${type} is not decoded on PGlite; use query() for it`);
}

/** The rows of the last result set in a backend response, or the first error it carries. */
function parseSimpleResponse<T>(buf: Uint8Array): T[] {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let fields: Field[] = [];
  let rows: Record<string, unknown>[] = [];
  let error: PgliteSimpleError | undefined;
  for (let at = 0; at < buf.length; ) {
    const kind = buf[at];
    const end = at + 1 + view.getInt32(at + 1);
    let p = at + 5;
    if (kind === 0x54) {
      // RowDescription: a new result set.
      const count = view.getInt16(p);
      p += 2;
      fields = [];
      rows = [];
      for (let i = 0; i < count; i++) {
        const [name, next] = cstring(buf, p);
        fields.push({ name, type: view.getInt32(next + 6) });
        p = next + 18;
      }
    } else if (kind === 0x44) {
      // DataRow
      const count = view.getInt16(p);
      p += 2;
      const row: Record<string, unknown> = {};
      for (let i = 0; i < count; i++) {
        const len = view.getInt32(p);
        p += 4;
        const f = fields[i] as Field;
        if (len < 0) row[f.name] = null;
        else {
          row[f.name] = decode(f.type, decoder.decode(buf.subarray(p, p + len)));
          p += len;
        }
      }
      rows.push(row);
    } else if (kind === 0x45 && !error) {
      // ErrorResponse: (code byte, string)* then a zero byte.
      const parts: Record<string, string> = {};
      while (buf[p] !== 0 && p < end) {
        const code = String.fromCharCode(buf[p] as number);
        const [value, next] = cstring(buf, p + 1);
        parts[code] = value;
        p = next;
      }
      error = new PgliteSimpleError(parts);
    }
    at = end;
  }
  if (error) throw error;
  return rows as T[];
}

export async function pgliteSimple<T>(client: PGlite, text: string): Promise<T[]> {
  const raw = await client._runExclusiveTransaction(() =>
    client._runExclusiveQuery(() => client.execProtocolRaw(queryMessage(text))),
  );
  return parseSimpleResponse<T>(raw);
}
