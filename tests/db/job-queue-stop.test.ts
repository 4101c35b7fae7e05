import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import { afterEach, expect, it } from "vitest";
import { createDb, type DbHandle } from "../../src/db/client.js";
import { createJobQueue } from "../../src/features/syncs/jobs/queue.js";

/**
 * Shutdown order: the app closes the job queue, then the database. pg-boss stops waiting for a running
 * job after its graceful timeout, and completes the job without awaiting the statement, so a handler
 * that outlived that timeout used to complete against a closed database: an unhandled rejection
 * ("Cannot use a pool after calling end on the pool" on PostgreSQL) after the app had closed.
 */
const log = pino({ level: "silent" });
let dbh: DbHandle | undefined;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

afterEach(async () => {
  process.off("unhandledRejection", onUnhandled);
  await dbh?.close();
  dbh = undefined;
});

it("stop() waits for a handler that outlives pg-boss's graceful stop; nothing reaches the closed database", async () => {
  process.on("unhandledRejection", onUnhandled);
  dbh = await createDb({ memory: true, log });
  const queue = createJobQueue({ dbh, log, expireSeconds: 60, concurrency: 1, stopTimeoutMs: 1_000 });
  let begin: () => void = () => {};
  const begun = new Promise<void>((ok) => {
    begin = ok;
  });
  let finished = false;
  // A run that does not honour the shutdown signal and ends 2.5 s later, past pg-boss's 1 s timeout.
  await queue.start(async () => {
    begin();
    await sleep(2_500);
    finished = true;
  });
  await queue.enqueue({ syncId: randomUUID(), action: "sync", attempt: 1 });
  await begun;

  await queue.stop();
  expect(finished).toBe(true);
  await expect(queue.enqueue({ syncId: randomUUID(), action: "sync", attempt: 1 })).rejects.toThrow(
    "the job queue has stopped",
  );

  await dbh.close();
  dbh = undefined;
  await sleep(300);
  expect(unhandled).toEqual([]);
});
