import { generateKeyPairSync } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { EventSourceMessage } from "eventsource-parser";
import { createParser } from "eventsource-parser";
import type { FastifyInstance } from "fastify";
import { SignJWT } from "jose";
import { request } from "undici";
import { vi } from "vitest";
import type { SecretChange } from "../../src/features/events/change-bus.js";
import type { Json } from "../helpers/fixtures.js";

/**
 * Test helpers for event streams: a self-issued licence, a listening server, and a real SSE client
 * (undici over a socket + eventsource-parser), as the Go clients would connect.
 */

/** A fresh Ed25519 issuer and a licence it signed, as LICENSE_KEY / LICENSE_PUBLIC_KEY env values. */
export async function licenseEnv(
  claims: { plan: string; features?: Record<string, boolean> } = { plan: "enterprise" },
): Promise<{ LICENSE_KEY: string; LICENSE_PUBLIC_KEY: string }> {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const key = await new SignJWT({ ...claims })
    .setProtectedHeader({ alg: "EdDSA" })
    .setSubject("ferry-tests")
    .setIssuedAt()
    .sign(privateKey);
  return {
    LICENSE_KEY: key,
    LICENSE_PUBLIC_KEY: publicKey.export({ type: "spki", format: "pem" }).toString(),
  };
}

export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

export type Subscribe = { projectId: string; register: Json[] };

export interface SseStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The error body when status is not 200. */
  json: Json;
  /** Dispatched messages (frames with a data line), data JSON-parsed. */
  events: { id?: string; event?: string; data: Json }[];
  /** Everything received, as text (pings have no data line, so the parser never dispatches them). */
  raw(): string;
  ended(): boolean;
  /** Resolves when the server ends the stream. */
  done: Promise<void>;
  close(): void;
}

export const ALL_EVENTS = ["secret:create", "secret:update", "secret:delete", "secret:import-mutation"];

export async function subscribe(base: string, token: string, body: Subscribe | Json): Promise<SseStream> {
  const ac = new AbortController();
  const res = await request(`${base}/api/v1/events/subscribe/project-events`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "text/event-stream",
    },
    body: JSON.stringify(body),
    signal: ac.signal,
    bodyTimeout: 0,
  });
  const events: SseStream["events"] = [];
  let text = "";
  let ended = false;
  if (res.statusCode !== 200) {
    const json = (await res.body.json()) as Json;
    return {
      status: res.statusCode,
      headers: res.headers,
      json,
      events,
      raw: () => text,
      ended: () => true,
      done: Promise.resolve(),
      close: () => {},
    };
  }
  const parser = createParser({
    onEvent: (m: EventSourceMessage) =>
      events.push({ id: m.id, event: m.event, data: JSON.parse(m.data) as Json }),
  });
  const decoder = new TextDecoder();
  const done = (async () => {
    try {
      for await (const chunk of res.body) {
        const s = decoder.decode(chunk as Buffer, { stream: true });
        text += s;
        parser.feed(s);
      }
    } catch {
      // aborted by close()
    } finally {
      ended = true;
    }
  })();
  return {
    status: res.statusCode,
    headers: res.headers,
    json: {},
    events,
    raw: () => text,
    ended: () => ended,
    done,
    close: () => ac.abort(),
  };
}

export const waitFor = (check: () => void, timeout = 10_000) => vi.waitFor(check, { timeout, interval: 20 });

/** A committed change as the data plane publishes it. */
export function change(projectId: string, over: Partial<SecretChange> = {}): SecretChange {
  return {
    projectId,
    environment: "dev",
    environmentId: "00000000-0000-0000-0000-000000000001",
    secretPath: "/",
    folderId: "00000000-0000-0000-0000-000000000002",
    kind: "created",
    keys: ["KEY"],
    personal: false,
    ...over,
  };
}

/** Keys delivered to a stream, in order, as "type env path key" strings (import mutations: no key). */
export function delivered(s: SseStream): string[] {
  const out: string[] = [];
  for (const e of s.events) {
    const { eventType, payload } = e.data.data as { eventType: string; payload: Json | Json[] };
    for (const p of Array.isArray(payload) ? payload : [payload]) {
      out.push([eventType, p.environment, p.secretPath, p.secretKey].filter(Boolean).join(" "));
    }
  }
  return out;
}
