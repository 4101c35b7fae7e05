import { buildTestApp, type TestApp } from "./build-test-app.js";
import {
  addMember,
  bootstrap,
  call,
  type Json,
  makeIdentity,
  makeProject,
  ok,
  type World,
} from "./fixtures.js";

/**
 * The common starting point of resource tests: a bootstrapped app, a project, a viewer member, and a
 * revoked token (for the shared permission cases).
 */
export type ProjectWorld = {
  t: TestApp;
  w: World;
  project: Json;
  viewer: { id: string; token: string };
  revokedToken: string;
};

export async function projectWorld(name: string): Promise<ProjectWorld> {
  const t = await buildTestApp();
  const w = await bootstrap(t.app);
  const project = await makeProject(t.app, w.adminToken, name);
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-");
  const viewer = await addMember(t.app, w, project.id, `${slug}-viewer`, "viewer");
  const gone = await makeIdentity(t.app, w, `${slug}-revoked`);
  await ok(call(t.app, "POST", "/api/v1/auth/token/revoke", { body: { accessToken: gone.token } }));
  return { t, w, project, viewer, revokedToken: gone.token };
}
