import { type SQL, sql } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { Executor } from "../db/client.js";

/**
 * Keeps a 1..n ordered list (environments of a project, imports of a folder) dense when one row enters,
 * leaves or moves. `from` is the row's old position (null when it is being inserted), `to` the new one
 * (null when it is being removed). Only the rows between the two shift, by one, toward the freed slot;
 * the caller writes `to` on the moving row itself. Run it inside the writing transaction, under the
 * lock that serialises writes to the list.
 */
export async function shiftPositions(
  tx: Executor,
  list: { table: PgTable; position: PgColumn; scope: SQL },
  from: number | null,
  to: number | null,
): Promise<void> {
  const { table, position, scope } = list;
  let delta: number;
  let range: SQL;
  if (from === null && to !== null) [delta, range] = [1, sql`${position} >= ${to}`];
  else if (to === null && from !== null) [delta, range] = [-1, sql`${position} > ${from}`];
  else if (from !== null && to !== null && to < from)
    [delta, range] = [1, sql`${position} >= ${to} AND ${position} < ${from}`];
  else if (from !== null && to !== null && to > from)
    [delta, range] = [-1, sql`${position} > ${from} AND ${position} <= ${to}`];
  else return;
  const col = sql.identifier(position.name);
  await tx.execute(sql`UPDATE ${table} SET ${col} = ${col} + ${delta} WHERE ${scope} AND ${range}`);
}
