import { describe, expect, it } from "vitest";
import { joinPath, normalizePath, parentOf } from "./paths.js";

describe("normalizePath", () => {
  it("adds a leading slash and trims trailing ones", () => {
    expect(normalizePath(undefined)).toBe("/");
    expect(normalizePath("")).toBe("/");
    expect(normalizePath("/")).toBe("/");
    expect(normalizePath("app")).toBe("/app");
    expect(normalizePath("/app/db/")).toBe("/app/db");
    expect(normalizePath("/app//")).toBe("/app");
  });

  it.each(["/app/../etc", "/./x", "/a//b", "/a b", "/é", "/a/%2e%2e"])("refuses %s with a 400", (p) => {
    expect(() => normalizePath(p)).toThrowError(expect.objectContaining({ status: 400 }));
  });

  it("joins and splits", () => {
    expect(joinPath("/", "a")).toBe("/a");
    expect(joinPath("/a", "b")).toBe("/a/b");
    expect(parentOf("/a/b")).toBe("/a");
    expect(parentOf("/a")).toBe("/");
  });
});
