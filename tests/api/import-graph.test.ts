import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretImports } from "../../src/db/schema/index.js";
import { findFolder } from "../../src/features/folders/folder-lookup.js";
import { resolveImports } from "../../src/features/secret-imports/import-graph.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";

/** `resolveImports`, the read side the secrets feature builds import lists and sync payloads on. */
describe("import graph resolution", () => {
  let t: TestApp;
  let w: World;
  let project: Json;
  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
    project = await makeProject(t.app, w.adminToken, "Graph");
    for (const name of ["a", "b", "c", "d"]) {
      await ok(
        call(t.app, "POST", "/api/v1/folders", {
          token: w.adminToken,
          body: { workspaceId: project.id, environment: "dev", name },
        }),
      );
    }
  });
  afterAll(async () => t.close());

  const link = (into: string, from: string) =>
    ok(
      call(t.app, "POST", "/api/v1/secret-imports", {
        token: w.adminToken,
        body: {
          workspaceId: project.id,
          environment: "dev",
          path: into,
          import: { environment: "dev", path: from },
        },
      }),
    );
  const folder = async (path: string) => {
    const f = await findFolder(t.services.db, project.id, "dev", path);
    if (!f) throw new Error(`no folder ${path}`);
    return f;
  };

  it("orders by position, flattens nested imports depth-first, visits each source once and ends cycles", async () => {
    await link("/a", "/b");
    await link("/a", "/c");
    await link("/a", "/missing");
    await link("/b", "/d");
    await link("/c", "/b");
    // d → a would be refused by the API as a cycle; write it directly to prove reads still terminate.
    const [a, b, c, d] = [await folder("/a"), await folder("/b"), await folder("/c"), await folder("/d")];
    await t.services.db
      .insert(secretImports)
      .values({ folderId: d.folderId, importEnv: a.envId, importPath: "/a", position: 1 });

    const resolved = await resolveImports(t.services.db, a);
    expect(resolved.map((i) => [i.secretPath, i.environment, i.folderId, i.folderIds])).toEqual([
      ["/b", "dev", b.folderId, [b.folderId, d.folderId]],
      ["/c", "dev", c.folderId, [c.folderId]],
      ["/missing", "dev", undefined, []],
    ]);
    expect(resolved[0]?.environmentInfo).toEqual({ id: a.envId, slug: "dev", name: "Development" });
  });

  it("each folder resolves from its own place; a folder without imports resolves to nothing", async () => {
    const [a, b, c, d] = [await folder("/a"), await folder("/b"), await folder("/c"), await folder("/d")];
    // c → b → d → a; a's other sources are c itself (visited) and /missing (no folder).
    expect((await resolveImports(t.services.db, c)).map((i) => i.folderIds)).toEqual([
      [b.folderId, d.folderId, a.folderId],
    ]);
    expect(await resolveImports(t.services.db, await folder("/"))).toEqual([]);
  });
});
