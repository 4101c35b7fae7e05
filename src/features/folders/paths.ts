import { AppError } from "../../lib/errors.js";

/**
 * Secret paths as Infisical normalises them: a leading slash is added, one or more trailing slashes are
 * trimmed (root stays "/"), and every segment must match [a-zA-Z0-9-_]. Empty segments ("//"), "." and
 * ".." are refused with a 400, never reaching the database.
 */
const SEGMENT = /^[a-zA-Z0-9-_]+$/;

export function normalizePath(input: string | undefined | null): string {
  const raw = (input ?? "/").trim() || "/";
  let p = raw.startsWith("/") ? raw : `/${raw}`;
  while (p.length > 1 && p.endsWith("/")) p = p.slice(0, -1);
  if (p === "/") return p;
  for (const seg of p.slice(1).split("/")) {
    if (!SEGMENT.test(seg)) {
      throw new AppError(
        "BAD_REQUEST",
        "Invalid secret path. Only alphanumeric characters, dashes, and underscores are allowed.",
      );
    }
  }
  return p;
}

export const segmentsOf = (path: string) => (path === "/" ? [] : path.slice(1).split("/"));

export const joinPath = (parent: string, name: string) => (parent === "/" ? `/${name}` : `${parent}/${name}`);

export const parentOf = (path: string) => {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
};

export const FOLDER_NAME = /^[a-zA-Z0-9-_]+$/;
export const FOLDER_NAME_MESSAGE =
  "Invalid folder name. Only alphanumeric characters, dashes, and underscores are allowed.";
